package mslemu

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// What candle's reduce.metal needs beyond those compiles: Apple's
// __is_valid_simdgroup_type trait (true for float, half, the 8 to 32-bit
// integers and their vectors), simd_product and the bitwise simd folds,
// and a bfloat from an integer (`return 0;` from a function returning
// bfloat, `b += 1`).
func TestSimdgroupTraitAndBfloatFromInteger(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	const src = `#include <metal_stdlib>
using namespace metal;
static_assert(__is_valid_simdgroup_type<float>::value && __is_valid_simdgroup_type<half4>::value);
static_assert(__is_valid_simdgroup_type<uint>::value && __is_valid_simdgroup_type<uchar2>::value);
static_assert(!__is_valid_simdgroup_type<int64_t>::value && !__is_valid_simdgroup_type<bfloat>::value);
template <typename T> struct One { static METAL_FUNC T get() { return 1; } };
METAL_FUNC bfloat zero() { return 0; }
kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  bfloat b = zero();
  b += 1;
  float f = b + 2;
  x[i] = f + float(One<bfloat>::get()) + simd_product(x[i]) + float(simd_or(1u << (i % 8)) ^ simd_and(3u) ^ simd_xor(0u));
}
`
	for _, c := range []struct {
		name, from, to string
		ok             bool
	}{
		{"ok", "", "", true},
		{"trait_is_apples", "!__is_valid_simdgroup_type<int64_t>::value", "__is_valid_simdgroup_type<int64_t>::value", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "simd.metal", Code: strings.Replace(src, c.from, c.to, 1)})
			if c.ok && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !c.ok && err == nil {
				t.Fatal("a false static_assert compiled")
			}
		})
	}
}
