package scaffold

import (
	"strings"
	"testing"
)

// macroKernelsSource writes its kernels only through function-like macros
// spread over continued lines, the `#` apart from `define` (as candle's
// indexing.metal writes INDEX_OP), with a `constant bool&` among the
// scalars.
const macroKernelsSource = `#include <metal_stdlib>
using namespace metal;

# define PICK_OP(NAME, IDX, T) \
kernel void NAME( \
    constant size_t &n, \
    constant bool &wrap, \
    const device T *x, \
    const device IDX *ids, \
    device T *y, \
    uint i [[ thread_position_in_grid ]] \
) { \
    if (i < n) y[i] = x[wrap ? ids[i] % n : ids[i]]; \
}

PICK_OP(pick_u32_f32, uint32_t, float)
PICK_OP(pick_u32_f16, uint32_t, half)
`

// `mltop new` finds a kernel only a macro writes, by --entry or as the
// list to pick from, at the line that invokes the macro, with the
// macro's argument types in its buffers; `constant bool&` is a flag.
func TestMetalKernelsMacrosWrite(t *testing.T) {
	res, err := Manifest(Request{Name: "pick", SrcPath: "/w/k.metal", Src: macroKernelsSource, Entries: []string{"pick_u32_f16"}, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# line 17: pick_u32_f16(", "entry: pick_u32_f16", "dtype: f16", "dtype: u32", "flags:\n  wrap: {default: false}", "args: [n, wrap, x, ids, y]"} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
	if strings.Contains(strings.Join(res.Notes, "\n"), "cannot read that type's fields") {
		t.Errorf("constant bool& read as a struct: %v", res.Notes)
	}
	_, err = Manifest(Request{Name: "pick", SrcPath: "/w/k.metal", Src: macroKernelsSource, Dir: "/w"})
	var ce *ChooseError
	if !asChoose(err, &ce) || len(ce.Kernels) != 2 || !strings.Contains(err.Error(), "line 16: pick_u32_f32") {
		t.Errorf("no --entry: %v, want the 2 kernels the macro writes, at lines 16 and 17", err)
	}
}

func asChoose(err error, ce **ChooseError) bool {
	c, ok := err.(*ChooseError)
	*ce = c
	return ok
}
