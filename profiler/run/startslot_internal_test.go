package run

import (
	"strings"
	"testing"
)

func TestWorkerStartsFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		v       string
		n       int
		warning string
	}{
		{"", DefaultWorkerStarts, ""},
		{"2", 2, ""},
		{"16", 16, ""},
		{"0", DefaultWorkerStarts, `MLTOP_WORKER_STARTS="0" is not a positive whole number`},
		{"-1", DefaultWorkerStarts, "not a positive whole number"},
		{"two", DefaultWorkerStarts, `"two"`},
	} {
		n, warning := workerStarts(c.v)
		if n != c.n || (c.warning == "") != (warning == "") || !strings.Contains(warning, c.warning) {
			t.Errorf("%q: %d, %q; want %d, %q", c.v, n, warning, c.n, c.warning)
		}
	}
}
