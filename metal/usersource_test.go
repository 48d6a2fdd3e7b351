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
		"#line 1 \"common.h\"\n#line 1 \"inner.h\"\n// inner\n#line 2 \"common.h\"\n\nconstant int X = 1;\n" +
		"#line 3 \"/k/softmax.metal\"\n\nkernel void f() {}\n#line 5 \"/k/softmax.metal\"\n\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Each line after a pasted include keeps its own number.
	if !strings.Contains(got, "#line 3 \"/k/softmax.metal\"\n\nkernel void f()") {
		t.Error("line mapping after the include is wrong")
	}
	cyc := profiler.Program{File: "a", Code: "#include \"a.h\"", Includes: map[string]string{"a.h": "#include \"b.h\"", "b.h": "#include \"a.h\""}}
	if _, err := AssembleUserSource(cyc); err != nil {
		t.Errorf("a cycle is pasted once, not an error: %v", err)
	}
}
