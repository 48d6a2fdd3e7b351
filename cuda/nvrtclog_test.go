package cuda

import "testing"

// The shapes of NVRTC 12/13 logs (EDG front end): diagnostics with a
// category and a number, notes of template instantiation, the summary.
func TestRewriteLog(t *testing.T) {
	cases := []struct{ in, want string }{
		{"/home/u/softmax/softmax.cu(30): error: identifier \"xx\" is undefined",
			"/home/u/softmax/softmax.cu:30: error: identifier \"xx\" is undefined"},
		{"softmax.cu(7): warning #177-D: variable \"y\" was declared but never referenced",
			"softmax.cu:7: warning #177-D: variable \"y\" was declared but never referenced"},
		{"mltop_user.cuh(12): error: expected a \";\"", "mltop_user.cuh:12: error: expected a \";\""},
		{"default_program(3): catastrophic error: cannot open source file \"nope.h\"",
			"default_program:3: catastrophic error: cannot open source file \"nope.h\""},
		{"k.cu(4): remark: something", "k.cu:4: remark: something"},
		// the source line and caret after a diagnostic are left alone
		{"k.cu(9): error: bad\n    float x = f(a(1), 2);\n              ^\n",
			"k.cu:9: error: bad\n    float x = f(a(1), 2);\n              ^\n"},
		{"          detected during instantiation of \"void f<T>(T *) [with T=float]\" at line 45 of /home/u/k.cu",
			"          detected during instantiation of \"void f<T>(T *) [with T=float]\" at /home/u/k.cu:45"},
		{"at line 3 of \"k.cu\"", "at k.cu:3"},
		{"2 errors detected in the compilation of \"softmax.cu\".", "2 errors detected in the compilation of \"softmax.cu\"."},
		{"f(3): something else", "f(3): something else"},
		{"  indented.cu(3): error: x", "  indented.cu(3): error: x"},
	}
	for _, c := range cases {
		if got := RewriteLog(c.in); got != c.want {
			t.Errorf("RewriteLog(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
	// every line of a multi-line log
	in := "a.cu(1): error: x\nb.cuh(2): warning #550-D: y\n2 errors detected in the compilation of \"a.cu\".\n"
	want := "a.cu:1: error: x\nb.cuh:2: warning #550-D: y\n2 errors detected in the compilation of \"a.cu\".\n"
	if got := RewriteLog(in); got != want {
		t.Errorf("multi-line:\n%s\nwant\n%s", got, want)
	}
}

func FuzzRewriteLog(f *testing.F) {
	f.Add("k.cu(9): error: bad\n  at line 4 of k.cu\n")
	f.Fuzz(func(t *testing.T, s string) {
		out := RewriteLog(s)
		if RewriteLog(out) != out {
			t.Errorf("not idempotent: %q → %q → %q", s, out, RewriteLog(out))
		}
	})
}
