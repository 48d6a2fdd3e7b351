package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/ui"
)

// TestTUINeedsTerminal: `mltop` with stdout not a terminal (a buffer here)
// starts no session; it says why, lists the headless commands, exits 2.
func TestTUINeedsTerminal(t *testing.T) {
	code, stdout, stderr := runMain(t, "--backend", "cpu")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{"the interactive session needs a terminal", "stdout", "mltop --config FILE", "mltop run KERNEL", "mltop list"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "could not open TTY") || stdout != "" {
		t.Errorf("bubbletea started, or something went to stdout: stdout %q stderr %q", stdout, stderr)
	}
}

func TestNeedTerminalNamesTheStream(t *testing.T) {
	for _, tc := range []struct {
		in, out bool
		want    string
	}{
		{true, true, ""},
		{false, true, "stdin is not one"},
		{true, false, "stdout is not one"},
		{false, false, "stdin and stdout are not one"},
	} {
		err := needTerminal(tc.in, tc.out)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("stdin tty=%v stdout tty=%v: %v, want no error", tc.in, tc.out, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("stdin tty=%v stdout tty=%v: %v, want %q", tc.in, tc.out, err, tc.want)
		}
	}
}

// TestTUITakesDevices: the session takes --devices (checked against the
// backend before the terminal); a good list gets as far as the terminal.
func TestTUITakesDevices(t *testing.T) {
	t.Setenv(fakeDevicesEnv, "2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--devices", "0,1"}, "the interactive session needs a terminal"},
		{[]string{"--devices", "all"}, "the interactive session needs a terminal"},
		{[]string{"--devices", "7"}, "device 7 asked for, but the cpu backend sees 2"},
		{[]string{"--devices", "0,x"}, `"x" is not a device ordinal`},
		{[]string{"--devices", "0,1", "--isolate", "off"}, "drop --isolate off"},
		{[]string{"--shard", "0/2"}, "--shard and --claims are for sweeps: add --config FILE"},
		{[]string{"--claims", "/tmp/c"}, "--shard and --claims are for sweeps: add --config FILE"},
	} {
		code, _, stderr := runMain(t, append([]string{"--backend", "cpu"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 saying %q:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// The session's sweep size counts a sweep file's specs (duplicates once)
// and estimates a huge one without holding it; a file that does not load
// is its error.
func TestSessionSweepSize(t *testing.T) {
	size := sweepSize(context.Background(), profiler.DefaultOptions(), sweep.Options{})
	small := writeFile(t, "small.yaml", "sweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64, 64]}\n    dims: {rows: 4, cols: [64, 128]}\n")
	if n, err := size(small); n != 4 || err != nil {
		t.Errorf("small sweep: %d, %v; want 4", n, err)
	}
	var rows, cols []string
	for i := 1; i <= 600; i++ {
		rows, cols = append(rows, fmt.Sprint(i)), append(cols, fmt.Sprint(i))
	}
	huge := writeFile(t, "huge.yaml", "sweeps:\n  - kernel: softmax_bwd\n    dtypes: [f32, bf16]\n    knobs: {WG: [32, 64, 128, 256, 512, 1024]}\n    dims: {rows: ["+strings.Join(rows, ", ")+"], cols: ["+strings.Join(cols, ", ")+"]}\n")
	if n, err := size(huge); err != nil || n <= ui.SessionSweepLimit {
		t.Errorf("huge sweep (4.32 M specs): %d, %v; want more than %d", n, err, ui.SessionSweepLimit)
	}
	if _, err := size(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("a missing file has a size")
	}
}
