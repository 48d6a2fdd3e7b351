package metal_test

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// emuRun compiles p on the emulation, runs it over grid×group threads with
// one output buffer of n 4-byte elements plus inputs, and returns the
// output's words.
func emuRun(t *testing.T, eb *mslemu.Backend, p profiler.Program, grid, group [3]int, n int, inputs ...[]byte) []uint32 {
	t.Helper()
	return emuRunScalars(t, eb, p, grid, group, n, nil, inputs...)
}

// emuRunScalars is emuRun with the dispatch's scalars.
func emuRunScalars(t *testing.T, eb *mslemu.Backend, p profiler.Program, grid, group [3]int, n int, scalars []profiler.Scalar, inputs ...[]byte) []uint32 {
	t.Helper()
	k, err := eb.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	var args []profiler.Buffer
	for _, in := range inputs {
		b, _ := eb.Alloc(int64(len(in)))
		if err := eb.Upload(b, in); err != nil {
			t.Fatal(err)
		}
		args = append(args, b)
	}
	out, _ := eb.Alloc(int64(4 * n))
	args = append(args, out)
	d := &profiler.Dispatch{Name: p.Entry, Program: p, Grid: grid, Group: group, Scalars: scalars}
	if err := eb.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: args}}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*n)
	if err := eb.Download(out, raw); err != nil {
		t.Fatal(err)
	}
	words := make([]uint32, n)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return words
}

const fillSource = `#include <metal_stdlib>
using namespace metal;
constant int SHIFT [[function_constant(0)]];
constant bool negate [[function_constant(1)]];
template <typename T, int N>
[[kernel]] void fill(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  T v = T(int(i) * N + SHIFT);
  y[i] = negate ? T(-v) : v;
}
#define instantiate_fill(tname, type, n) \
  template [[host_name("fill_" #tname "_" #n)]] [[kernel]] decltype(fill<type, n>) fill<type, n>;
instantiate_fill(float, float, 3)
instantiate_fill(int, int, 2)
`

// A template instantiated under host names by a macro list, specialised
// by an int and a bool function constant: each entry and each pair of
// values gives its own output.
func TestHostNameTemplatesAndFunctionConstantsOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	cases := []struct {
		entry  string
		shift  int64
		negate int64
		want   func(i int) uint32
	}{
		{"fill_float_3", 5, 1, func(i int) uint32 { return math.Float32bits(-float32(3*i + 5)) }},
		{"fill_float_3", 0, 0, func(i int) uint32 { return math.Float32bits(float32(3 * i)) }},
		{"fill_int_2", 7, 0, func(i int) uint32 { return uint32(int32(2*i + 7)) }},
		{"fill_int_2", 7, 1, func(i int) uint32 { return uint32(-int32(2*i + 7)) }},
	}
	for _, c := range cases {
		p := profiler.Program{Source: "fill", File: "fill.metal", Code: fillSource, Entry: c.entry, Constants: []profiler.FunctionConstant{
			{Name: "SHIFT", I: c.shift}, {Name: "negate", Kind: profiler.ConstBool, I: c.negate},
		}}
		got := emuRun(t, eb, p, [3]int{2, 1, 1}, [3]int{4, 1, 1}, 8)
		for i, g := range got {
			if w := c.want(i); g != w {
				t.Errorf("%s SHIFT=%d negate=%d: y[%d] = %#x, want %#x", c.entry, c.shift, c.negate, i, g, w)
			}
		}
	}
	missing := profiler.Program{Source: "fill", File: "fill.metal", Code: fillSource, Entry: "fill_float_3", Constants: []profiler.FunctionConstant{{Name: "SHIFT", I: 1}}}
	if _, err := eb.Compile(missing); err == nil || !strings.Contains(err.Error(), "negate") {
		t.Errorf("a constant without a value: %v", err)
	}
	unknown := profiler.Program{Source: "fill", File: "fill.metal", Code: fillSource, Entry: "fill_half_3", Constants: []profiler.FunctionConstant{{Name: "SHIFT", I: 1}, {Name: "negate", I: 0}}}
	if _, err := eb.Compile(unknown); err == nil || !strings.Contains(err.Error(), "fill_half_3") {
		t.Errorf("an entry that is neither a kernel nor a host name: %v", err)
	}
}
