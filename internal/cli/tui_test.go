package cli

import (
	"strings"
	"testing"
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
