package mslemu

import (
	"strings"
	"testing"
)

// Subscripts of a declared threadgroup array and of a [[threadgroup(0)]]
// parameter are checked in their own block; a member, a redeclaration,
// a comment, another function's parameter of that name and uses that are
// not subscripts are left alone.
func TestCheckThreadgroupIndexingRewrites(t *testing.T) {
	src := `struct P { float s[4]; };
void helper(threadgroup float* s, uint i) { s[i] = 0; }
kernel void k(device float* y [[buffer(0)]], threadgroup float* dyn [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup float s[64];
  threadgroup float tile[4][16];
  threadgroup float total;
  P p;
  s[i] = p.s[0] + tile[i / 16][i % 16];
  s [i + 1] = dyn[i];
  // s[i] in a comment
  threadgroup float4* s4 = (threadgroup float4*)s;
  helper(s + 32, i);
  y[i] = s4[0].x + total + sizeof(s[0]);
  { float s[2]; s[0] = 1; }
  return s[0];
}
void after(threadgroup float* s) { s[1] = 2; }
`
	got := checkThreadgroupIndexing(src)
	for _, want := range []string{
		`void helper(threadgroup float* s, uint i) { s[i] = 0; }`,
		`emu_tg_at(s, "s")[i] = p.s[0] + emu_tg_at(tile, "tile")[i / 16][i % 16];`,
		`emu_tg_at(s, "s") [i + 1] = emu_tg_at(dyn, "dyn")[i];`,
		`// s[i] in a comment`,
		`(threadgroup float4*)s;`,
		`helper(s + 32, i);`,
		`y[i] = s4[0].x + total + sizeof(emu_tg_at(s, "s")[0]);`,
		`{ float s[2]; emu_tg_at(s, "s")[0] = 1; }`, // the inner s is a thread array: emu_tg_at checks its own extent
		`return emu_tg_at(s, "s")[0];`,
		`void after(threadgroup float* s) { s[1] = 2; }`,
		"  threadgroup float s[64];\n  threadgroup float tile[4][16];",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}
