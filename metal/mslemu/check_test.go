package mslemu

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// Only names of Apple's compiler on g++'s error lines count; notes and
// user names do not.
func TestAppleBuiltins(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"bf16_math.h:36:31: error: '__metal_fabs' was not declared in this scope\nbf16_math.h:232:5: error: '__METAL_MAYBE_FAST_MATH__' was not declared in this scope\nbf16_math.h:36:31: error: '__metal_fabs' was not declared", "__METAL_MAYBE_FAST_MATH__, __metal_fabs"},
		{"k.metal:6:3: error: 'Tx' was not declared in this scope", ""},
		{"k.metal:3:1: note: in expansion of macro '__metal_helper'\nk.metal:6:3: error: 'Tx' was not declared", ""},
		{"k.metal:1: error: '__metal_a' '__metal_b' '__metal_c' '__metal_d' '__metal_e'", "__metal_a, __metal_b, __metal_c, __metal_d"},
		{"k.metal:1: error: 'my__metal_x' and '__metal_' alone", ""},
	} {
		if got := strings.Join(appleBuiltins(c.out), ", "); got != c.want {
			t.Errorf("appleBuiltins(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

// A source far beyond the emulation reports its first errors, not all of
// them.
func TestCheckUserStopsAfterTheFirstErrors(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "unknown_type_%d value_%d;\n", i, i)
	}
	b.WriteString("kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 1; }\n")
	err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "many.metal", Code: b.String()})
	if err == nil {
		t.Fatal("a source with 40 unknown types compiled")
	}
	if n := strings.Count(err.Error(), "error:"); n > MaxCheckErrors+1 || n == 0 {
		t.Errorf("%d errors reported, want 1 to %d:\n%v", n, MaxCheckErrors+1, err)
	}
	if !strings.Contains(err.Error(), "unknown_type_0") {
		t.Errorf("the first error is missing:\n%v", err)
	}
}
