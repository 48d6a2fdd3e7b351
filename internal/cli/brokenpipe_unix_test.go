//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runClosedStdout runs mltop in a process of its own (runIsolated) whose
// stdout is a pipe nobody reads: its reading end is closed before mltop
// writes anything, as `| head -0` would, so every write to stdout fails
// with a broken pipe. It returns the exit status (-1: killed by a signal,
// SIGPIPE here) and stderr.
func runClosedStdout(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var e strings.Builder
	cmd.Stdout, cmd.Stderr = w, &e
	err = cmd.Run()
	w.Close()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), e.String()
}

// A sweep whose stdout is closed (`| head -2`) is not killed by SIGPIPE:
// with --csv the table stops, the sweep goes on and every row is in the
// CSV, exit 0; without --csv it stops as ctrl-C stops it and says that
// nothing was kept.
func TestSweepOutlivesClosedStdout(t *testing.T) {
	sweep := writeFile(t, "pipe.yaml", pipeSweep)
	for _, format := range []string{"table", "--json", "--bench"} {
		t.Run(format, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "p.csv")
			args := []string{"--config", sweep, "--csv", csv}
			if format != "table" {
				args = append(args, format)
			}
			code, stderr := runClosedStdout(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, want 0 (the sweep went on into the CSV)\n%s", code, stderr)
			}
			if rows := readCSV(t, csv); len(rows) != 4 {
				t.Errorf("%d rows in the CSV, want all 4\n%s", len(rows), stderr)
			}
			want := "stdout was closed (broken pipe): the table stops here; the sweep goes on into " + csv
			if strings.Count(stderr, "stdout was closed") != 1 || !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say once %q:\n%s", want, stderr)
			}
			if strings.Contains(stderr, "interrupted") {
				t.Errorf("the sweep was not interrupted, stderr says it was:\n%s", stderr)
			}
		})
	}
	t.Run("no csv", func(t *testing.T) {
		code, stderr := runClosedStdout(t, "--config", sweep)
		if code != exitFailed {
			t.Fatalf("exit %d, want %d (stopped as by ctrl-C)\n%s", code, exitFailed, stderr)
		}
		for _, want := range []string{
			"the sweep stopped, as with ctrl-C: without --csv the table was its only output",
			"interrupted: stdout was closed (broken pipe) and it was the sweep's only output: 3 of 4 specs not measured; nothing else kept: add --csv FILE",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
}

// pipeAfter is a stdout whose reader goes away after rows table rows:
// the write of the next one, and every write after it, fails with a
// broken pipe.
type pipeAfter struct {
	rows, written int
}

func (w *pipeAfter) Write(p []byte) (int, error) {
	if !strings.Contains(string(p), "test_fault ") {
		return len(p), nil // the header
	}
	if w.written == w.rows {
		return 0, syscall.EPIPE
	}
	w.written++
	return len(p), nil
}

// A sweep without --csv whose stdout closes during its last row's write
// ran every spec: it says it finished with its table cut short, not that
// it stopped as with ctrl-C; a close at an earlier row still stops it.
func TestSweepStdoutClosedAtTheLastRow(t *testing.T) {
	sweep := writeFile(t, "pipe.yaml", pipeSweep)
	for _, c := range []struct {
		name, want, not string
		rows            int
	}{
		{"last row", "stdout was closed (broken pipe) after every spec ran: the sweep finished (4 of 4 specs measured), but its table on stdout is cut short", "as with ctrl-C", 3},
		{"first row", "the sweep stopped, as with ctrl-C", "the sweep finished", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stderr strings.Builder
			code := Main([]string{"--config", sweep}, &pipeAfter{rows: c.rows}, &stderr)
			if code != exitFailed {
				t.Errorf("exit %d, want %d", code, exitFailed)
			}
			if !strings.Contains(stderr.String(), c.want) || strings.Contains(stderr.String(), c.not) {
				t.Errorf("stderr does not say %q, or says %q:\n%s", c.want, c.not, stderr.String())
			}
		})
	}
}

// Other commands whose stdout is closed end quietly: no Go panic, no
// stack, and no death by SIGPIPE (which the shell shows as 141).
func TestCommandsEndQuietlyOnClosedStdout(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "a.csv")
	if code, _, stderr := runMain(t, "--config", writeFile(t, "pipe.yaml", pipeSweep), "--csv", csv); code != 0 {
		t.Fatalf("sweep for compare: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"list"},
		{"--help"},
		{"run", "test_fault", "--set", "MODE=0", "--time-limit", "0.05", "--hot"},
		{"compare", csv, csv},
		{"compare", "--markdown", csv, csv},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			code, stderr := runClosedStdout(t, args...)
			if code < 0 || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("mltop %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
			}
		})
	}
}

// `mltop watch DIR | head -1`: once stdout is closed, nobody reads the
// lines of the runs to come; watch stops (it would otherwise wait for
// saves forever, since SIGPIPE no longer ends it) and says why.
func TestWatchStopsWhenStdoutCloses(t *testing.T) {
	dir := writeReloadKernel(t, "test_watch_pipe", "1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"watch", dir, "--backend", "cpu", "--isolate", "off", "--set", "WG=128"}, w, &errb)
	}()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(errb.String(), "stdout was closed (broken pipe): watch stops") {
			t.Errorf("exit %d\n%s", code, errb.String())
		}
	case <-time.After(time.Minute): // not a timing: without the fix it waits for a save forever
		t.Fatal("watch still runs a minute after its stdout was closed")
	}
}
