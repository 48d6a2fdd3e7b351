package mslemu

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// Only outputs whose every error is a swizzle of an emulated vector count,
// and the first one is named.
func TestOnlySwizzles(t *testing.T) {
	const read = "sw.metal:5:16: error: ‘float4’ {aka ‘struct emu_vec<float, 4>’} has no member named ‘xy’; did you mean ‘x’?\n"
	const matrix = "sw.metal:8:19: error: 'struct emu_vec<float, 3>' has no member named 'xyz'\n"
	for _, c := range []struct{ name, out, want string }{
		{"read", read, "sw.metal:5"},
		{"read then matrix column", read + matrix, "sw.metal:5"},
		{"matrix column", matrix + "compilation terminated due to -fmax-errors=10.\n", "sw.metal:8"},
		{"colour names", "k.metal:3:9: error: 'half4' {aka 'struct emu_vec<_Float16, 4>'} has no member named 'rgb'\n", "k.metal:3"},
		{"a swizzle and a typo", read + "sw.metal:9:3: error: 'y' was not declared in this scope\n", ""},
		{"a user struct's member", "k.metal:4:7: error: 'struct Pair' has no member named 'xy'\n", ""},
		{"not a swizzle name", "k.metal:4:7: error: 'struct emu_vec<float, 4>' has no member named 'xq'\n", ""},
		{"five lanes", "k.metal:4:7: error: 'struct emu_vec<float, 4>' has no member named 'xyzwx'\n", ""},
		{"no errors", "k.metal: In function 'void k()':\n", ""},
	} {
		file, line, ok := onlySwizzles(c.out)
		got := ""
		if ok {
			got = fmt.Sprintf("%s:%d", file, line)
		}
		if got != c.want {
			t.Errorf("%s: onlySwizzles = %q, want %q", c.name, got, c.want)
		}
	}
}

// The first swizzle is quoted from the compiled text by its #line
// directives.
func TestQuoteLine(t *testing.T) {
	compiled := "using T = float;\n#line 1 \"k.metal\"\na\n  float2 b = v.xy;\n#line 1 \"u.h\"\nx\ny = v.yx;\n# line 3\nz = v.zz;\n#line 4 \"k.metal\"\nw = v.ww;\n"
	for _, c := range []struct {
		file string
		line int
		want string
	}{
		{"k.metal", 2, "k.metal:2: float2 b = v.xy;"},
		{"u.h", 2, "u.h:2: y = v.yx;"},
		{"u.h", 3, "u.h:3: z = v.zz;"},
		{"k.metal", 4, "k.metal:4: w = v.ww;"},
		{"k.metal", 9, "k.metal:9"},
		{"other.h", 1, "other.h:1"},
	} {
		if got := quoteLine(compiled, c.file, c.line); got != c.want {
			t.Errorf("quoteLine(%s, %d) = %q, want %q", c.file, c.line, got, c.want)
		}
	}
}

// A kernel that reads and writes swizzles (and a matrix column's) is not
// judged by the emulation: ErrSwizzles naming its first swizzle; the same
// kernel with a typo beside the swizzles is still an error.
func TestCheckUserSwizzles(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	src := `#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float4 v = x[i];
  float2 a = v.xy;
  v.xy = v.yx;
  float3x3 M;
  float3 c = M[0].xyz;
  x[i] = v + a.x + c.x;
}
`
	err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "sw.metal", Code: src})
	if !errors.Is(err, ErrSwizzles) || !strings.Contains(err.Error(), "the first: sw.metal:5: float2 a = v.xy;") {
		t.Errorf("swizzles: %v", err)
	}
	typo := strings.Replace(src, "x[i] = v", "x[i] = w", 1)
	err = CheckUser(context.Background(), profiler.Program{Entry: "k", File: "sw.metal", Code: typo})
	if err == nil || errors.Is(err, ErrSwizzles) || !strings.Contains(err.Error(), "'w' was not declared") && !strings.Contains(err.Error(), "‘w’ was not declared") {
		t.Errorf("swizzles and a typo: %v", err)
	}
}
