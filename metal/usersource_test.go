package metal

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestAssembleUserSource(t *testing.T) {
	p := profiler.Program{
		File:     "/k/softmax.metal",
		Code:     "#include <metal_stdlib>\n#include \"common.h\"\nkernel void f() {}\n#include \"common.h\"\n",
		Includes: map[string]string{"common.h": "#include \"inner.h\"\nconstant int X = 1;", "inner.h": "// inner"},
	}
	got, err := AssembleUserSource(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "#line 1 \"/k/softmax.metal\"\n#include <metal_stdlib>\n" +
		"#line 1 \"common.h\"\n#line 1 \"inner.h\"\n// inner\n#line 2 \"common.h\"\nconstant int X = 1;\n" +
		"#line 3 \"/k/softmax.metal\"\nkernel void f() {}\n#line 5 \"/k/softmax.metal\"\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A #line in the code (the macro prelude mltop puts in front) restarts
	// the count: the include on the prelude's line 2 maps back to line 2.
	pre := profiler.Program{File: "u.metal", Code: "#define T float\n#line 1 \"u.metal\"\nint a;\n#include \"h.h\"\nint b;\n", Includes: map[string]string{"h.h": "int h;"}}
	got, _ = AssembleUserSource(pre)
	if !strings.Contains(got, "int h;\n#line 3 \"u.metal\"\nint b;") {
		t.Errorf("after a #line:\n%s", got)
	}
	cyc := profiler.Program{File: "a", Code: "#include \"a.h\"", Includes: map[string]string{"a.h": "#include \"b.h\"", "b.h": "#include \"a.h\""}}
	if _, err := AssembleUserSource(cyc); err != nil {
		t.Errorf("a cycle is pasted once, not an error: %v", err)
	}
}

// A toolkit header included with angle brackets (PyTorch's
// `#include <c10/metal/common.h>`, found in include_dirs) is pasted like a
// quoted one; an angle include the program does not hold (<metal_stdlib>)
// stays for the compiler, and a malformed one is kept as written.
func TestAssembleUserSourceAngleInclude(t *testing.T) {
	p := profiler.Program{
		File:     "ln.metal",
		Code:     "#include <c10/metal/common.h>\n#include <metal_stdlib>\n#include <c10/metal/common.h\nkernel void f() {}\n",
		Includes: map[string]string{"c10/metal/common.h": "constant unsigned simdgroup_size = 32;"},
	}
	got, err := AssembleUserSource(p)
	if err != nil {
		t.Fatal(err)
	}
	want := "#line 1 \"ln.metal\"\n#line 1 \"c10/metal/common.h\"\nconstant unsigned simdgroup_size = 32;\n" +
		"#line 2 \"ln.metal\"\n#include <metal_stdlib>\n#include <c10/metal/common.h\nkernel void f() {}\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
