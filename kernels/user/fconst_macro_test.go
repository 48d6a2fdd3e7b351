package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// scaleOpHeader gives the function constants' base index, as
// ggml-metal-impl.h does for ggml-metal.metal.
const scaleOpHeader = "#pragma once\n#define FC_SCALE 300\n"

const scaleOpMetal = `#include <metal_stdlib>
#include "fc.h"
using namespace metal;

constant short FC_scale_op [[function_constant(FC_SCALE + 0)]];
constant bool  FC_scale_neg [[function_constant(FC_SCALE + 1)]];

kernel void scale_op(device const float* x [[buffer(0)]],
                     device float* y [[buffer(1)]],
                     constant uint& n [[buffer(2)]],
                     uint i [[thread_position_in_grid]]) {
    if (i < n) {
        float v = FC_scale_op == 3 ? 3.0f * x[i] : x[i];
        y[i] = FC_scale_neg ? -v : v;
    }
}
`

const scaleOpYAML = `name: t_scale_op
sources: {metal: s.metal}
dtypes: [f32]
dims: {N: {default: 100}}
constants: {FC_scale_op: 3, FC_scale_neg: "N > 10"}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: scale_op, grid: ["cdiv(N, 64)"], threads: [64], args: [x, y, N]}
check: {python: ref.py}
`

const scaleOpRef = `def reference(inputs, dims):
    return {"y": -3.0 * inputs["x"]}
`

func scaleOpFiles() map[string]string {
	return map[string]string{"kernel.yaml": scaleOpYAML, "s.metal": scaleOpMetal, "fc.h": scaleOpHeader, "ref.py": scaleOpRef}
}

// A function constant's index written with a header's #define (ggml-metal:
// `[[function_constant(FC_SUM_ROWS + 0)]]`) is evaluated at load; a macro
// no file defines is an error naming the constant and its index.
func TestFunctionConstantMacroIndex(t *testing.T) {
	f, err := Load(usertest.Write(t, scaleOpFiles()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range f.consts {
		got[c.decl.Name] = c.decl.Index
	}
	if len(got) != 2 || got["FC_scale_op"] != 300 || got["FC_scale_neg"] != 301 {
		t.Errorf("constants at %v, want FC_scale_op 300 and FC_scale_neg 301", got)
	}
	files := scaleOpFiles()
	files["fc.h"] = "#pragma once\n#define FC_SCALE_BASE 300\n"
	if _, err := Load(usertest.Write(t, files)); err == nil || !strings.Contains(err.Error(), `function constant FC_scale_op: index "FC_SCALE + 0"`) {
		t.Errorf("FC_SCALE undefined: got %v, want an error naming the constant and its index", err)
	}
}

// The constants reach the kernel at the indices the macros give: the
// emulator's output matches -3·x only when both are set.
func TestFunctionConstantMacroIndexOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	if res := runOnEmulator(t, eb, scaleOpFiles(), nil, nil); res.Status != profiler.StatusOK {
		t.Fatalf("status %s (error %q) %+v", res.Status, res.Error, res.Verdict)
	}
}
