package scaffold

import (
	"strings"
	"testing"
)

// fconstSource reads two function constants through a helper (candle's
// where_cond), tests a third with is_function_constant_defined, and has a
// fourth only another kernel reads.
const fconstSource = `#include <metal_stdlib>
using namespace metal;
constant bool IDS_CONTIGUOUS [[function_constant(0)]];
constant int UNROLL [[function_constant(1)]];
constant bool OPTIONAL [[function_constant(2)]];
constant bool OTHER [[function_constant(3)]];

static inline uint at(uint i) { return IDS_CONTIGUOUS ? i : i * UNROLL; }

kernel void pick(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  y[i] = x[at(i)];
  if (is_function_constant_defined(OPTIONAL) && OPTIONAL) { y[i] += 1; }
}
kernel void other(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  if (OTHER) { y[i] = 0; }
}
`

// mltop new gives the function constants the entry reads a value (a bool
// one a flag, an integer one a knob), and none to those it need not.
func TestNewWritesFunctionConstants(t *testing.T) {
	res, err := Manifest(Request{Name: "my_pick", SrcPath: "/w/k.metal", Src: fconstSource, Entries: []string{"pick"}, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"IDS_CONTIGUOUS: {default: false}   # sets function constant IDS_CONTIGUOUS (bool, index 0)",
		"UNROLL: {values: [0], default: 0}   # sets function constant UNROLL (int, index 1)",
		"constants:\n  IDS_CONTIGUOUS: IDS_CONTIGUOUS",
		"  UNROLL: UNROLL",
	} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
	for _, not := range []string{"OPTIONAL", "OTHER"} {
		if strings.Contains(res.Text, not) {
			t.Errorf("manifest names %s, which the entry needs no value for:\n%s", not, res.Text)
		}
	}
}
