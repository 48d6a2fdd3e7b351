package user

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// scaleRowsTemplate is a Metal kernel template as a user writes it, with a
// type and a value parameter and a scalar of the template's type
// (`constant T& bias`), and no instantiation: the manifest's
// `entry: scale_rows<T, K>` is all that names one.
const scaleRowsTemplate = `#include <metal_stdlib>
using namespace metal;

template <typename T, int K>
[[kernel]] void scale_rows(device const T* x [[buffer(0)]],
                           device T* y [[buffer(1)]],
                           constant uint& cols [[buffer(2)]],
                           constant float& alpha [[buffer(3)]],
                           constant T& bias [[buffer(4)]],
                           uint2 gid [[thread_position_in_grid]]) {
    if (gid.x < cols) {
        const uint i = gid.y * cols + gid.x;
        y[i] = T(float(x[i]) * alpha * K) + bias;
    }
}
`

// scaleRowsInstantiated is the same source with its own [[host_name]]
// instantiations, the one for half spelt otherwise than mltop renders it
// (spaces, 3u): the manifest's entry launches them.
const scaleRowsInstantiated = scaleRowsTemplate + `
template [[host_name("scale_rows_f32_k3")]] [[kernel]] decltype(scale_rows<float, 3>) scale_rows<float, 3>;
template [[host_name("scale_rows_f16_k3")]] [[kernel]] decltype(scale_rows< half,3u >) scale_rows< half,3u >;
`

const scaleRowsYAML = `name: t_scale_rows
sources: {metal: s.metal}
dtypes: [f32, f16]
knobs:
  WG: {values: [32, 64], default: 32}
  K: {values: [1, 3], default: 3}
dims:
  rows: {default: 5}
  cols: {default: 77}
buffers:
  - {name: x, shape: [rows, cols]}
  - {name: y, shape: [rows, cols], out: true}
dispatches:
  - entry: "scale_rows<T, K>"
    grid: ["cdiv(cols, WG)", rows, 1]
    threads: [WG, 1, 1]
    args: [x, y, cols, 0.5, 0.25]
check: {python: ref.py}
`

const scaleRowsRef = `def reference(inputs, dims):
    return {"y": inputs["x"] * 0.5 * dims["K"] + 0.25}
`

// A Metal template entry runs on the MSL emulation at f32 and f16 against
// its reference: without an instantiation in the source (mltop appends
// one), and with the source's own ones (launched by their host names:
// g++ refuses a second instantiation of the same arguments). A source
// whose kernel computes otherwise is a mismatch.
func TestMetalTemplateEntryOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	wrong := strings.Replace(scaleRowsTemplate, "* K)", "* (K + 1))", 1)
	for _, c := range []struct {
		name, src string
		dt        profiler.DType
		want      profiler.Status
	}{
		{"appended_f32", scaleRowsTemplate, profiler.F32, profiler.StatusOK},
		{"appended_f16", scaleRowsTemplate, profiler.F16, profiler.StatusOK},
		{"own_host_name_f32", scaleRowsInstantiated, profiler.F32, profiler.StatusOK},
		{"own_host_name_f16", scaleRowsInstantiated, profiler.F16, profiler.StatusOK},
		{"wrong_kernel_f16", wrong, profiler.F16, profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(scaleRowsYAML, "t_scale_rows", "t_scale_rows_"+c.name, 1)
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "s.metal": c.src, "ref.py": scaleRowsRef}))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: c.dt}.WithDefaults(f.Schema())
			res := run.NewRunner(eb).Run(context.Background(), s, opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s (error %q) %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

// The host name a spec launches: the source's own for the arguments it
// instantiates (whatever their spelling), else one of mltop's, whose
// instantiation InstantiateEntry appends.
func TestMetalTemplateEntryPlans(t *testing.T) {
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(scaleRowsYAML, "check: {python: ref.py}", "check: none", 1), "s.metal": scaleRowsInstantiated}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dt          profiler.DType
		k           int
		entry, host string
	}{
		{profiler.F32, 3, "scale_rows<float, 3>", "scale_rows_f32_k3"},
		{profiler.F16, 3, "scale_rows<half, 3>", "scale_rows_f16_k3"},
		{profiler.F16, 1, "scale_rows<half, 1>", "mltop_scale_rows_"},
	} {
		s := profiler.Spec{Kernel: f.Name(), DType: c.dt, Knobs: map[string]int{"K": c.k}}.WithDefaults(f.Schema())
		p, err := f.Plan(s, emuDev)
		if err != nil {
			t.Fatalf("%s K=%d: %v", c.dt, c.k, err)
		}
		prog := p.Dispatches[0].Program
		if prog.Entry != c.entry {
			t.Errorf("%s K=%d: entry %q, want %q", c.dt, c.k, prog.Entry, c.entry)
		}
		code, err := metal.AssembleUserSource(prog)
		if err != nil {
			t.Fatal(err)
		}
		grown, host, err := metal.InstantiateEntry(code, prog.Entry)
		if err != nil || !strings.HasPrefix(host, c.host) {
			t.Errorf("%s K=%d: launches %q (%v), want %s", c.dt, c.k, host, err, c.host)
		}
		if appended := grown != code; appended != strings.HasPrefix(host, "mltop_") {
			t.Errorf("%s K=%d: host %s, source grown %v", c.dt, c.k, host, appended)
		}
	}
}
