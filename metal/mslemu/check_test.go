package mslemu

import (
	"strings"
	"testing"
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
