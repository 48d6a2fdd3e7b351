package scaffold

import "testing"

// A parameter named like a CSV column keeps the source's name (the CSV
// writes such a dim as dim.n); the macros mltop defines, dtype (the Python
// reference's key) and CUDA's built-ins are renamed.
func TestSafeName(t *testing.T) {
	for _, c := range []struct{ name, dtypeName, want string }{
		{"n", "T", "n"},
		{"time", "T", "time"},
		{"status", "T", "status"},
		{"median_us", "T", "median_us"},
		{"N", "T", "N"},
		{"dtype", "T", "dtype_"},
		{"DTYPE", "T", "DTYPE_"},
		{"DTYPE_F16", "T", "DTYPE_F16_"},
		{"blockDim", "T", "WG"},
		{"threadIdx", "T", "threadIdx_"},
		{"T", "floatX", "T"},
	} {
		if got := safeName(c.name, c.dtypeName); got != c.want {
			t.Errorf("safeName(%q, %q) = %q, want %q", c.name, c.dtypeName, got, c.want)
		}
	}
}
