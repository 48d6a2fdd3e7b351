package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// grayMetal turns RGB bytes into float luminance and counts bright
// pixels per row into 16-bit and 32-bit unsigned counters, and writes a
// signed byte per pixel (its offset from 128): u8 in, f32, u16, u32 and
// i8 out.
const grayMetal = `#include <metal_stdlib>
using namespace metal;

kernel void gray(device const uchar* img [[buffer(0)]],
                 device float* lum [[buffer(1)]],
                 device char* centered [[buffer(2)]],
                 device ushort* bright16 [[buffer(3)]],
                 device uint* bright32 [[buffer(4)]],
                 constant int& W [[buffer(5)]],
                 uint i [[thread_position_in_grid]]) {
    float y = 0.25f * img[3 * i] + 0.5f * img[3 * i + 1] + 0.25f * img[3 * i + 2];
    lum[i] = y / 255.0f;
    centered[i] = (char)((int)img[3 * i + 1] - 128);
    if (i % W == 0) {
        ushort n = 0;
        for (int k = 0; k < W; k++) n += img[3 * (i + k) + 1] >= 128 ? 1 : 0;
        bright16[i / W] = n;
        bright32[i / W] = (uint)n * 65536u;
    }
}
`

const grayYAML = `name: t_gray
sources: {metal: g.metal}
dtypes: [f32]
dims:
  H: {default: 5}
  W: {default: 7}
buffers:
  - {name: img, dtype: u8, shape: [H, W, 3], init: "randint(0, 256)"}
  - {name: lum, dtype: f32, shape: [H, W], out: true}
  - {name: centered, dtype: i8, shape: [H, W], out: true}
  - {name: bright16, dtype: u16, shape: [H], out: true}
  - {name: bright32, dtype: u32, shape: [H], out: true}
dispatches:
  - {entry: gray, grid: [H], threads: [W], args: [img, lum, centered, bright16, bright32, W]}   # one thread per pixel: the kernel has no bound test
check: {python: ref.py}
`

const grayRef = `import numpy as np

def reference(inputs, dims):
    img = inputs["img"]
    assert img.dtype == np.uint8, img.dtype
    rgb = img.astype(np.float64)
    g = img[:, :, 1].astype(np.int64)
    n = (g >= 128).sum(axis=1)
    return {"lum": (0.25 * rgb[:, :, 0] + 0.5 * rgb[:, :, 1] + 0.25 * rgb[:, :, 2]) / 255.0,
            "centered": (g - 128).astype(np.int8),
            "bright16": n.astype(np.uint16),
            "bright32": n.astype(np.uint32) * 65536}
`

// Byte images end to end on the MSL emulation: a u8 input generated over
// 0…255, uploaded as bytes, sent to Python as uint8; f32, i8, u16 and u32
// outputs downloaded and compared (the integers exactly). A broken twin
// of each output is a mismatch: the wrong channel weights (f32), a
// centre of 127 (i8, off by one), a count off by one (u16), and the
// 32-bit counter shifted one bit too few (u32).
func TestByteImageOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, from, to string
		want           profiler.Status
		worst          string
	}{
		{"ok", "", "", profiler.StatusOK, ""},
		{"wrong weights", "0.25f * img[3 * i + 2]", "0.26f * img[3 * i + 2]", profiler.StatusMismatch, "lum"},
		{"centre off by one", "- 128);", "- 127);", profiler.StatusMismatch, "centered"},
		{"count off by one", "bright16[i / W] = n;", "bright16[i / W] = n + 1;", profiler.StatusMismatch, "bright16"},
		{"u32 counter shifted", "* 65536u", "* 32768u", profiler.StatusMismatch, "bright32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(grayMetal, c.from, c.to, 1)
			if c.from != "" && src == grayMetal {
				t.Fatalf("%q is not in the kernel", c.from)
			}
			name := "t_gray_" + strings.ReplaceAll(c.name, " ", "_")
			res := runOnEmulator(t, eb, map[string]string{"kernel.yaml": strings.Replace(grayYAML, "t_gray", name, 1), "g.metal": src, "ref.py": grayRef}, nil, nil)
			if res.Status != c.want || !strings.HasPrefix(res.Verdict.Worst, c.worst) {
				t.Fatalf("status %s (worst %q), want %s on %s: %s %+v", res.Status, res.Verdict.Worst, c.want, c.worst, res.Error, res.Verdict)
			}
		})
	}
}

// An f64 buffer cannot run on Metal: the plan says why and what to do.
func TestF64RefusedOnMetal(t *testing.T) {
	y := strings.Replace(grayYAML, "{name: lum, dtype: f32,", "{name: lum, dtype: f64,", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "g.metal": grayMetal, "ref.py": grayRef}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	_, err = f.Plan(s, emuDev)
	if err == nil || !strings.Contains(err.Error(), "buffer lum is f64, and Metal has no double") {
		t.Fatalf("plan: %v, want f64 refused on Metal", err)
	}
}
