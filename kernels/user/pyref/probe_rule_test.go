package pyref

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeInterpreter writes an executable script named python3 into a new folder
// that prints body's output, and returns the script's path.
func fakeInterpreter(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "python3")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeFollowsTheRule: Probe finds the interpreter by Rule alone
// (MLTOP_PYTHON, else python3 on the PATH, no other fallback) and says what
// is missing, naming MLTOP_PYTHON.
func TestProbeFollowsTheRule(t *testing.T) {
	withNumPy := fakeInterpreter(t, "echo 9.8.7")
	withoutNumPy := fakeInterpreter(t, "echo 'No module named numpy' >&2; exit 1")
	for _, tc := range []struct {
		name, env, path string
		want            []string
	}{
		{"MLTOP_PYTHON with NumPy", withNumPy, "", []string{"(" + withNumPy + "), NumPy 9.8.7"}},
		{"MLTOP_PYTHON without NumPy", withoutNumPy, "", []string{withoutNumPy + ") has no NumPy", "set " + PythonEnv}},
		{"python3 on the PATH", "", filepath.Dir(withNumPy), []string{"python3 (" + withNumPy + "), NumPy 9.8.7"}},
		{"no python3 on the PATH", "", t.TempDir(), []string{"python3 not found", "set " + PythonEnv}},
		{"MLTOP_PYTHON missing", "/no/such/python", "", []string{"/no/such/python not found", PythonEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(PythonEnv, tc.env)
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			}
			got := Probe(context.Background()).String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Probe = %q, want it to hold %q", got, w)
				}
			}
		})
	}
}
