package lint

import (
	"strings"
	"testing"
)

// #177-D goes for functions, stays for variables; other warnings stay; a
// remark left alone goes too.
func TestWithoutUnusedFunctions(t *testing.T) {
	fn := `k.cu:1: warning #177-D: function "helper" was declared but never referenced`
	v := `k.cu:2: warning #177-D: variable "table" was declared but never referenced`
	other := "k.cu:5: warning #550-D: variable \"x\" was set but never used"
	remark := `Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"`
	for _, tc := range []struct{ log, want string }{
		{fn + "\n\n" + v + "\n", v},
		{fn + "\n\n" + fn + "\n\n" + remark, ""},
		{other + "\n\n" + fn + "\n\n" + remark, other + "\n\n" + remark},
		{fn, ""},
		{"", ""},
	} {
		if got := withoutUnusedFunctions(tc.log); got != tc.want {
			t.Errorf("withoutUnusedFunctions(%q) = %q, want %q", tc.log, got, tc.want)
		}
	}
}

// Compile errors and warnings the same but for their dtype become one
// naming the dtypes; notes, other steps and other files stay apart.
func TestMergeDTypes(t *testing.T) {
	in := []Finding{
		{Level: Warning, Step: StepCompile, File: "k.cu", Msg: "CUDA f32: NVRTC warns:\nA"},
		{Level: Note, Step: StepCompile, File: "k.cu", Msg: "CUDA f32: k compiles (lowered _Z1kPf)"},
		{Level: Warning, Step: StepCompile, File: "k.cu", Msg: "CUDA f16: NVRTC warns:\nA"},
		{Level: Note, Step: StepCompile, File: "k.cu", Msg: "CUDA f16: k compiles (lowered _Z1kPf)"},
		{Level: Warning, Step: StepCompile, File: "k.cu", Msg: "CUDA bf16: NVRTC warns:\nA"},
		{Level: Warning, Step: StepCompile, File: "other.cu", Msg: "CUDA bf16: NVRTC warns:\nA"},
		{Level: Warning, Step: StepSource, File: "k.cu", Msg: "CUDA f16: NVRTC warns:\nA"},
	}
	var got []string
	for _, f := range mergeDTypes(in) {
		got = append(got, f.File+" "+f.Msg)
	}
	want := []string{
		"k.cu CUDA f32, f16, bf16: NVRTC warns:\nA",
		"k.cu CUDA f32: k compiles (lowered _Z1kPf)",
		"k.cu CUDA f16: k compiles (lowered _Z1kPf)",
		"other.cu CUDA bf16: NVRTC warns:\nA",
		"k.cu CUDA f16: NVRTC warns:\nA",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("merged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
