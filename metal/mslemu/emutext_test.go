package mslemu

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// forEmulation spells Metal's constant address space as const (one const
// where the source has two), leaves names that contain the word alone,
// keeps a line ending between a comment's "constant" and the next line,
// and spells a GNU range initializer as a fill.
func TestForEmulationRewrites(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"static float pick(constant float* t, int k);", "static float pick(const float* t, int k);"},
		{"const constant int& n [[buffer(0)]]", "const int& n [[buffer(0)]]"},
		{"constant const int shape[2]", "const int shape[2]"},
		{"constexpr constant static float tab[2] = {1, 2};", "constexpr const static float tab[2] = {1, 2};"},
		{"constant short FC_op [[function_constant(0)]];", "const short FC_op [[function_constant(0)]];"},
		{"if (is_function_constant_defined(x)) {}", "if (is_function_constant_defined(x)) {}"},
		{"// become function constant\n    const uint nsg = 1;", "// become function const\n    const uint nsg = 1;"},
		{"    float s[NQ] = { [0 ... NQ-1] = -FLT_MAX/2 };", "    float s[NQ] = {}; emu_fill_through(s, NQ-1, -FLT_MAX/2);"},
		{"qk_t mqk[C/NE] = { [ 0 ... C/NE - 1] = 0.0f };", "qk_t mqk[C/NE] = {}; emu_fill_through(mqk, C/NE - 1, 0.0f);"},
	} {
		if got := forEmulation(c.in, ""); got != c.want {
			t.Errorf("forEmulation(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Metal's constant address space is read-only on the emulation too: a
// store through a `constant float*` parameter is an error, a read of a
// constant table through one compiles.
func TestConstantPointerIsReadOnly(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	const src = `constexpr constant static float tab[2] = {1.0f, 2.0f};
static float get(constant float* t, int i) { return t[i & 1]; }
static void poke(constant float* t) { (void)t; }
kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { poke(tab); x[i] = get(tab, int(i)); }
`
	for _, c := range []struct {
		name, from, to string
		ok             bool
	}{
		{"read", "", "", true},
		{"store", "(void)t;", "t[0] = 3.0f;", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := strings.Replace(src, c.from, c.to, 1)
			err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "tab.metal", Code: code})
			if c.ok && err != nil {
				t.Fatalf("a read through a constant pointer was rejected: %v", err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), "read-only")) {
				t.Fatalf("a store through a constant pointer: %v, want g++'s read-only error", err)
			}
		})
	}
}
