package run_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// Close stops a worker at once, even one that would not end at its
// stdin's end (a GPU worker releasing its context, or a hung one): after
// Close it is gone or a zombie, never still running for its 60 s.
func TestWorkerPoolCloseKillsTheWorker(t *testing.T) {
	hello := `{"type":"hello","device":{"backend":"cpu","name":"fake"}}`
	pool, err := run.NewWorkerPool([]string{"sh", "-c", "echo '" + hello + "'; exec sleep 60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := pool.PID()
	start := time.Now()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	// Not a timing of mltop: a Close that waits for the worker to end on
	// its own (it never would) takes its 5 s fallback before it kills.
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("Close waited %v for a worker that does not end on its own", waited)
	}
	for range 50 { // the kernel may take a moment to finish the exit
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("worker %d still runs after Close", pid)
}

// A worker that dies before it says hello without saying why (a crash in
// the driver's start) is started once more; one that says why (a fatal
// line: no GPU), that a signal stopped, or that dies twice is not, and the
// error keeps both last words.
func TestWorkerPoolStartsACrashedWorkerOnceMore(t *testing.T) {
	hello := `{"type":"hello","device":{"backend":"cpu","name":"fake"}}`
	fatal := `{"type":"fatal","error":"no GPU here"}`
	for _, tc := range []struct {
		name   string
		script string // $1: a file counting the starts
		starts int
		err    string
	}{
		{"crash, then hello", `echo x >> "$1"; [ $(wc -l < "$1") -ge 2 ] || { echo 'SIGSEGV: rip 0x7f' >&2; exit 2; }; echo '` + hello + `'; exec sleep 60`, 2, ""},
		{"crash twice", `echo x >> "$1"; echo "crash $(wc -l < "$1")" >&2; exit 2`, 2, "crash 2"},
		{"fatal", `echo x >> "$1"; echo '` + fatal + `'; exit 1`, 1, "no GPU here"},
		{"stopped by a signal (ctrl-C reached it)", `echo x >> "$1"; kill -TERM $$`, 1, "stopped before it said hello"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			count := t.TempDir() + "/starts"
			pool, err := run.NewWorkerPool([]string{"sh", "-c", tc.script, "worker", count}, nil)
			if pool != nil {
				defer pool.Close()
			}
			data, _ := os.ReadFile(count)
			if n := strings.Count(string(data), "x"); n != tc.starts {
				t.Errorf("started %d times, want %d", n, tc.starts)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("the second start failed: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want it to say %q", err, tc.err)
			}
			if tc.name == "crash twice" && err != nil && !strings.Contains(err.Error(), "crash 1") {
				t.Errorf("the first start's last words are lost: %v", err)
			}
		})
	}
}
