package user

import (
	"slices"
	"testing"
)

// ExtentResolver writes an extent in a manifest's terms: each source of
// names in its place in the lookup order, what it cannot say reported.
func TestExtentResolver(t *testing.T) {
	known := func(n string) bool { return n == "WG" || n == "N" }
	for _, c := range []struct {
		name, text string
		r          ExtentResolver
		want       string
		unknown    []string
	}{
		{"number with a suffix", "32u", ExtentResolver{}, "32", nil},
		{"macro of macros", "TILE * (TILE + PAD)", ExtentResolver{Macros: map[string]string{"TILE": "16", "PAD": "1"}}, "272", nil},
		{"known names kept", "WG*2 + N", ExtentResolver{Known: known}, "WG * 2 + N", nil},
		{"local constant of a known name", "K / 4", ExtentResolver{Known: known, Locals: map[string]string{"K": "2 * WG"}}, "(2 * WG) / 4", nil},
		{"local constant of a local constant", "B", ExtentResolver{Locals: map[string]string{"A": "4", "B": "A * 8u"}}, "32", nil},
		{"a local shadows a known name", "WG", ExtentResolver{Known: known, Locals: map[string]string{"WG": "32"}}, "32", nil},
		{"a macro expands first, as the preprocessor's", "TILE", ExtentResolver{Macros: map[string]string{"TILE": "16"}, Locals: map[string]string{"TILE": "8"}}, "16", nil},
		{"a local declared twice differently", "n", ExtentResolver{Locals: map[string]string{"n": ""}}, "n", []string{"n"}},
		{"template argument", "BLOCK / 32", ExtentResolver{Known: known, TemplateArgs: map[string]string{"BLOCK": "WG"}}, "WG / 32", nil},
		{"template argument expression", "BLOCK", ExtentResolver{Known: known, TemplateArgs: map[string]string{"BLOCK": "WG * 2"}}, "(WG * 2)", nil},
		{"template argument already wrapped", "BLOCK + 1", ExtentResolver{Known: known, TemplateArgs: map[string]string{"BLOCK": "(WG * 2)"}}, "(WG * 2) + 1", nil},
		{"a known name beats the others", "WG", ExtentResolver{Known: known, Others: map[string]string{"WG": "64"}}, "WG", nil},
		{"namespace-scope constant", "BLOCK / 32", ExtentResolver{Others: map[string]string{"BLOCK": "64"}}, "2", nil},
		{"sizeof a C type", "64 / sizeof(float)", ExtentResolver{}, "16", nil},
		{"sizeof the dtype stays", "N * sizeof(T)", ExtentResolver{Known: known, DType: "T"}, "N * sizeof(T)", nil},
		{"sizeof an unknown type", "sizeof(Pair)", ExtentResolver{}, "sizeof(Pair)", []string{"sizeof(Pair)"}},
		{"placeholder as its name", "{{N}} + 1", ExtentResolver{Known: known}, "N + 1", nil},
		{"runtime values reported once", "blockDim.x * blockDim.y", ExtentResolver{}, "blockDim.x * blockDim.y", []string{"blockDim", "x", "y"}},
		{"a call, spaced as written", "min( WG ,N )", ExtentResolver{Known: known}, "min(WG, N)", []string{"min"}},
		{"qualified name", "ns::K * 2", ExtentResolver{}, "ns::K * 2", []string{"ns", "K"}},
		{"nil Known knows nothing", "WG", ExtentResolver{}, "WG", []string{"WG"}},
		{"a constant of itself stops", "A", ExtentResolver{Locals: map[string]string{"A": "A + 1"}}, "((((((((A + 1) + 1) + 1) + 1) + 1) + 1) + 1) + 1)", []string{"A"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			if got := r.Resolve(c.text); got != c.want {
				t.Errorf("Resolve(%q) = %q, want %q", c.text, got, c.want)
			}
			if !slices.Equal(r.Unknown(), c.unknown) {
				t.Errorf("Unknown() = %q, want %q", r.Unknown(), c.unknown)
			}
		})
	}
}

func TestParenthesize(t *testing.T) {
	for in, want := range map[string]string{
		"WG":          "WG",
		"16":          "16",
		"2 * WG":      "(2 * WG)",
		"(a + 1)":     "(a + 1)",
		"(a) * (b)":   "((a) * (b))",
		"sizeof(T)":   "(sizeof(T))",
		"((a + 1))":   "((a + 1))",
		"(a + 1) * 2": "((a + 1) * 2)",
	} {
		if got := Parenthesize(in); got != want {
			t.Errorf("Parenthesize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocalIntConsts(t *testing.T) {
	got := LocalIntConsts(`{ constexpr int A = 4; const uint B{A * 2}; const float F = 1.5f; constexpr int C = {{MAX_N}};
	const device float* p = x; int notConst = 3; const int D = f(1, 2), E = 5; }`,
		`kernel void k() { static constexpr auto K = 2 * WG; const unsigned short S = 3; const int E = 6;
	for (const int i = 0;;) {} x = y; const size_t Z = sizeof(T) * 2; }`)
	want := map[string]string{"A": "4", "B": "A * 2", "C": "MAX_N", "D": "f(1, 2)", "K": "2 * WG", "S": "3", "E": "6", "Z": "sizeof(T) * 2"}
	for k, v := range want {
		if w, ok := got[k]; !ok || w != v {
			t.Errorf("%s = %q (declared %v), want %q", k, w, ok, v)
		}
	}
	for _, k := range []string{"F", "p", "notConst", "i"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is no integer constant of a statement: %q", k, got[k])
		}
	}
}
