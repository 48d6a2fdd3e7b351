package user

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// Every value of an i32 or u32 buffer travels exactly, not only those
// within float32's 2^24: a u32 randint over the whole range (hash words)
// and an i32 npy: array holding 2^30+1 and -2^31+1 reach the device and the
// Python reference as they are, and a hash of the words compares exactly.

// wideOffs is the i32 npy: array: offsets float32 would round (2^30+1 to
// 2^30, 2^24+1 to 2^24); -2^31+1, as sel = offs - 1 stays within int32.
var wideOffs = []int64{1<<30 + 1, -1<<31 + 1, 1<<24 + 1, 7, 1<<31 - 1, -1<<24 - 1, 0, 1<<30 + 3}

func wideOffsNPY(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := pyref.WriteNPYInt64(&b, []int{len(wideOffs)}, wideOffs); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wideRef checks what it got: words as uint32 drawn over the whole range
// (odd values above 2^24 among them), offs as int64 equal to the file's.
// It returns the murmur finalizer of each word and each offset minus one.
const wideRef = `import numpy as np

OFFS = [1073741825, -2147483647, 16777217, 7, 2147483647, -16777217, 0, 1073741827]

def fmix(w):
    x = w.astype(np.uint64)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85ebca6b)) & np.uint64(0xffffffff)
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xc2b2ae35)) & np.uint64(0xffffffff)
    x ^= x >> np.uint64(16)
    return x

def reference(inputs, dims):
    w, o = inputs["words"], inputs["offs"]
    if w.dtype == np.uint32:  # the wrap check sends it as int64 too
        big = w[w > (1 << 24)]
        assert len(big) > 0 and (big % 2 == 1).any(), ("words rounded to float32?", w)
    assert o.dtype == np.int64, o.dtype
    assert list(o) == OFFS * (len(o) // len(OFFS)), ("offs not exact", list(o))
    st = inputs["st"]
    assert st.dtype == np.uint32 and st.min() >= 4000000000, st
    lcg = (st.astype(np.uint64) * np.uint64(1664525) + np.uint64(1013904223)) & np.uint64(0xffffffff)
    return {"h": fmix(w).astype(np.uint32), "sel": o - 1, "st": lcg.astype(np.uint32)}
`

const wideMetal = `#include <metal_stdlib>
using namespace metal;

kernel void wide(device uint* h [[buffer(0)]],
                 device int* sel [[buffer(1)]],
                 device const uint* words [[buffer(2)]],
                 device const int* offs [[buffer(3)]],
                 device uint* st [[buffer(4)]],
                 uint i [[thread_position_in_grid]]) {
    st[i] = st[i] * 1664525u + 1013904223u;
    uint x = words[i];
    x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; x ^= x >> 16;
    h[i] = x;
    sel[i] = offs[i] - 1;
}
`

const wideCUDA = `__global__ void wide(unsigned* h, int* sel, const unsigned* words, const int* offs, unsigned* st) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    st[i] = st[i] * 1664525u + 1013904223u;
    unsigned x = words[i];
    x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; x ^= x >> 16;
    h[i] = x;
    sel[i] = offs[i] - 1;
}
`

const wideYAML = `name: t_wide
sources: {SRC}
dtypes: [f32]
dims:
  N: {default: 8}
buffers:
  - {name: h, dtype: u32, shape: [N], out: true}
  - {name: sel, dtype: i32, shape: [N], out: true}
  - {name: words, dtype: u32, shape: [N], init: "randint(0, 4294967296)"}
  - {name: offs, dtype: i32, shape: [N], init: "npy:offs.npy"}
  - {name: st, dtype: u32, shape: [N], inout: true, init: "randint(4000000000, 4294967296)"}
dispatches:
  - {entry: wide, grid: [1], threads: [N], args: [h, sel, words, offs, st]}
check: {python: ref.py}
`

// The reference of the check (CheckReference: the inputs of seed 1 on
// the tiny shape) gets the exact values, and returns what the buffers
// take; the plan's buffers carry patterns, and the bytes the device gets
// hold the exact integers.
func TestWideIntsReachReference(t *testing.T) {
	usePython(t)
	f, err := Load(usertest.Write(t, map[string]string{
		"kernel.yaml": strings.Replace(wideYAML, "{SRC}", "{cuda: k.cu}", 1),
		"k.cu":        wideCUDA, "ref.py": wideRef, "offs.npy": wideOffsNPY(t),
	}))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	got, problems, err := f.CheckReference(context.Background(), "", s)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 || len(got) != 3 {
		t.Fatalf("outputs %+v, problems %+v", got, problems)
	}
	p, err := f.Plan(s, cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range p.Buffers {
		if !b.IntBits {
			t.Errorf("buffer %s: IntBits %v", b.Name, b.IntBits)
		}
	}
	offs, _ := p.Buffer("offs")
	vals := profiler.Fill(offs, 1)
	raw := make([]byte, offs.Bytes())
	profiler.EncodeBuffer(offs, raw, vals)
	dec := make([]float64, len(vals))
	offs.Type.DecodeF64(raw, dec)
	for i, want := range wideOffs {
		if dec[i] != float64(want) {
			t.Errorf("offs[%d] reaches the device as %v, want %d", i, dec[i], want)
		}
	}
	// A reference that rounds through float32 is caught by its own
	// assertion: what the patterns spare every reference.
	broken := strings.Replace(wideRef, `o = inputs["words"], inputs["offs"]`, `o = inputs["words"], inputs["offs"].astype(np.float32).astype(np.int64)`, 1)
	f2, err := Load(usertest.Write(t, map[string]string{
		"kernel.yaml": strings.Replace(strings.Replace(wideYAML, "{SRC}", "{cuda: k.cu}", 1), "t_wide", "t_wide_rounded", 1),
		"k.cu":        wideCUDA, "ref.py": broken, "offs.npy": wideOffsNPY(t),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f2.CheckReference(context.Background(), "", profiler.Spec{Kernel: f2.Name(), DType: profiler.F32}.WithDefaults(f2.Schema())); err == nil || !strings.Contains(err.Error(), "offs not exact") {
		t.Fatalf("a reference that rounds offs to float32: %v", err)
	}
}

// On the MSL emulation: the hash of u32 words drawn over the whole range
// and the i32 offsets compare exactly; a reference off by one on values
// above 2^24 alone is a mismatch (one that float32 values could not show).
func TestWideIntsOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	for _, c := range []struct {
		name, from, to string
		dims           map[string]int
		want           profiler.Status
	}{
		{"ok", "", "", nil, profiler.StatusOK},
		{"ok on more words", "", "", map[string]int{"N": 64}, profiler.StatusOK},
		{"hash off by one above 2^24", `"h": fmix(w).astype(np.uint32)`, `"h": (fmix(w) + (fmix(w) > (1 << 24))).astype(np.uint32)`, nil, profiler.StatusMismatch},
		{"offset off by one above 2^24", `"sel": o - 1`, `"sel": o - 1 + (o > (1 << 24))`, nil, profiler.StatusMismatch},
		{"inout state off by one", `"st": lcg.astype(np.uint32)`, `"st": (lcg + 1).astype(np.uint32)`, nil, profiler.StatusMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref := strings.Replace(wideRef, c.from, c.to, 1)
			y := strings.Replace(strings.Replace(wideYAML, "{SRC}", "{metal: k.metal}", 1), "t_wide", "t_wide_"+strings.NewReplacer(" ", "_", "^", "").Replace(c.name), 1)
			files := map[string]string{"kernel.yaml": y, "k.metal": wideMetal, "ref.py": ref, "offs.npy": wideOffsNPY(t)}
			if n := c.dims["N"]; n > 0 {
				var b bytes.Buffer
				var offs []int64
				for len(offs) < n {
					offs = append(offs, wideOffs...)
				}
				if err := pyref.WriteNPYInt64(&b, []int{n}, offs[:n]); err != nil {
					t.Fatal(err)
				}
				files["offs.npy"] = b.String()
			}
			res := runOnEmulator(t, eb, files, nil, c.dims)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}

// A check kernel gets our integers exactly where its buffer holds them
// (recoded between the two buffers' patterns), and an error naming the
// value where it does not.
func TestWideIntsToCheckKernel(t *testing.T) {
	dir := t.TempDir()
	manifest := func(name, dtype, init, check string) string {
		return "name: " + name + "\nsources: {cuda: k.cu}\ndtypes: [f32]\ndims:\n  N: {default: 4}\nbuffers:\n" +
			"  - {name: x, dtype: " + dtype + ", shape: [N], init: \"" + init + "\"}\n" +
			"  - {name: y, dtype: f32, shape: [N], out: true}\n" +
			"dispatches:\n  - {entry: k, grid: [1], threads: [N], args: [x, y, N]}\ncheck: " + check + "\n"
	}
	writeFile(t, dir+"/naive/kernel.yaml", manifest("wk_naive", "i64", "randint(0, 10)", "none"))
	writeFile(t, dir+"/naive/k.cu", `extern "C" __global__ void k(const long* x, float* y, int N) {}`)
	writeFile(t, dir+"/fast/kernel.yaml", manifest("wk_fast", "u32", "randint(0, 4294967296)", "{kernel: ../naive/kernel.yaml}"))
	writeFile(t, dir+"/fast/k.cu", `extern "C" __global__ void k(const unsigned* x, float* y, int N) {}`)
	f, err := Load(dir + "/fast/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: "wk_fast", DType: profiler.F32, Dims: map[string]int{"N": 4}}
	ours := profiler.BufferSpec{Type: profiler.U32, Init: profiler.InitInts, IntBits: true}
	theirs := profiler.BufferSpec{Type: profiler.I64, Init: profiler.InitInts, IntBits: true}
	want := []int64{0, 1<<24 + 1, 1<<31 - 1, 12345}
	x := make([]float32, len(want))
	for i, v := range want {
		x[i] = profiler.IntSlot(ours, v)
	}
	var gave []float32
	runOn := func(o profiler.Family, ospec profiler.Spec, in profiler.Inputs) (map[string][]float64, error) {
		gave = in["x"]
		return map[string][]float64{"y": make([]float64, 4)}, nil
	}
	if _, err := f.DeviceReference(s, profiler.Inputs{"x": x}, 4, 1, runOn); err != nil {
		t.Fatal(err)
	}
	for i, v := range want {
		if got := profiler.IntValue(theirs, gave[i]); got != v {
			t.Errorf("the check kernel's x[%d] = %d, want %d", i, got, v)
		}
	}
	x[3] = profiler.IntSlot(ours, 1<<31)
	_, err = f.DeviceReference(s, profiler.Inputs{"x": x}, 4, 1, runOn)
	if err == nil || !strings.Contains(err.Error(), "check: kernel wk_naive: your input x holds 2147483648 (element 3), which its buffer x (i64) does not hold exactly: give it your buffer's dtype (u32)") {
		t.Fatalf("a value the check kernel's buffer does not hold: %v", err)
	}
}

// The wrap check sets a u32 input to its ends: 0 and 2^32-1 exactly, as
// patterns, and names them.
func TestAtEndsWideInts(t *testing.T) {
	b := profiler.BufferSpec{Name: "w", Type: profiler.U32, Elems: 4, Init: profiler.InitData, IntBits: true}
	r := profiler.BufferSpec{Name: "r", Type: profiler.U32, Elems: 4, Init: profiler.InitInts, Lo: 5, Hi: 1 << 32, IntBits: true}
	in := profiler.Inputs{
		"w": {profiler.IntSlot(b, 1<<24+1), profiler.IntSlot(b, 3), profiler.IntSlot(b, 1<<32-2), profiler.IntSlot(b, 1<<31)},
		"r": {profiler.IntSlot(r, 9), profiler.IntSlot(r, 9), profiler.IntSlot(r, 9), profiler.IntSlot(r, 9)},
	}
	out, ends := atEnds([]profiler.BufferSpec{b, r}, in, []string{"w", "r"})
	for name, want := range map[string][2]int64{"w": {3, 1<<32 - 2}, "r": {5, 1<<32 - 1}} {
		bs := map[string]profiler.BufferSpec{"w": b, "r": r}[name]
		if lo, hi := profiler.IntValue(bs, out[name][0]), profiler.IntValue(bs, out[name][1]); lo != want[0] || hi != want[1] {
			t.Errorf("%s at its ends: %d, %d, want %d, %d", name, lo, hi, want[0], want[1])
		}
	}
	if strings.Join(ends, "; ") != "w: 3, 4294967294; r: 5, 4294967295" {
		t.Errorf("ends %q", ends)
	}
}

// check: against a built-in family, whose reference reads integer inputs
// as float32: values within 2^24 pass as they are, one beyond is refused
// by name.
func TestFloatValuesForBuiltins(t *testing.T) {
	b := profiler.BufferSpec{Name: "targets", Type: profiler.I32, Init: profiler.InitInts, IntBits: true}
	got, err := floatValues(b, []float32{profiler.IntSlot(b, 7), profiler.IntSlot(b, -1<<24)}, "cross_entropy")
	if err != nil || got[0] != 7 || got[1] != -1<<24 {
		t.Fatalf("%v %v", got, err)
	}
	_, err = floatValues(b, []float32{profiler.IntSlot(b, 1), profiler.IntSlot(b, 1<<24+1)}, "cross_entropy")
	if err == nil || !strings.Contains(err.Error(), "check against cross_entropy: input targets holds 16777217 (element 1), and cross_entropy's reference reads its inputs as float32, exact only within ±2^24") {
		t.Fatalf("%v", err)
	}
}
