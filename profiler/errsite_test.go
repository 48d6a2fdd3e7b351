package profiler

import "testing"

// TestErrorSite: where compilers' and the manifest loader's messages point.
func TestErrorSite(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"compiling k (k): nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)\n/home/u/softmax.cu(30): error: identifier \"x\" is undefined", "softmax.cu:30"},
		{"program_source:12:5: error: use of undeclared identifier 'x'", "program_source:12"}, // no extension: not a file
		{"/tmp/k/softmax.metal:12:5: error: use of undeclared identifier 'x'", "softmax.metal:12"},
		{"/tmp/k/kernel.yaml:14:30: dispatches[0].grid: unknown name 'rowz'", "kernel.yaml:14"},
		{"a.cu(3): warning: unused\nb.cu(7): error: bad", "b.cu:7"},
		{"a.cu(3): warning: unused", "a.cu:3"},
		{"worker died: signal: killed", ""},
		{"version 1.2 of x", ""},
	} {
		got := SiteLabel(c.msg)
		if c.want == "program_source:12" {
			c.want = "" // Metal's in-memory name has no extension: nothing to point at
		}
		if got != c.want {
			t.Errorf("SiteLabel(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
