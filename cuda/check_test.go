package cuda

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestCheckArchDefaultsToHopper(t *testing.T) {
	for in, want := range map[string]string{"": "sm_90", "  ": "sm_90", "sm_80": "sm_80"} {
		if got := checkArch(in); got != want {
			t.Errorf("checkArch(%q) = %q, want %q", in, got, want)
		}
	}
}

const checkSource = `#include <cuda_fp16.h>
namespace ns {
template <typename T, int N>
__global__ void scale(T* y, T a, int n) {
	__shared__ float tile[N * 32];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x % (N * 32)] = 1.0f;
	if (i < n) y[i] = a * y[i] * T(tile[0]);
}
}
extern "C" __global__ void plain(float* y) { y[0] = 1; }
`

// CheckCompile needs NVRTC and nothing else; without it the error says
// where it looked.
func TestCheckCompile(t *testing.T) {
	p := profiler.Program{Source: "scale", File: "scale.cu", Code: checkSource, Entry: "ns::scale<float, 4>"}
	r, err := CheckCompile(p, "")
	if err != nil && (strings.Contains(err.Error(), "NVRTC not found (looked in") || strings.Contains(err.Error(), "Linux")) {
		t.Skip("no NVRTC here: ", err)
	}
	if err != nil {
		t.Fatalf("CheckCompile: %v\nlog: %s", err, r.Log)
	}
	if r.Arch != "sm_90" || !strings.HasPrefix(r.Lowered, "_ZN2ns5scaleIfLi4EE") || !slices.Contains(r.Kernels, r.Lowered) {
		t.Errorf("report: %+v", r)
	}
	// The 512 B tile, without what the compiler reserves for the system.
	if r.Registers != -1 || r.StaticShared != 4*32*4 || r.CubinBytes == 0 {
		t.Errorf("cubin facts: registers %d, shared %d, size %d", r.Registers, r.StaticShared, r.CubinBytes)
	}
	t.Logf("%+v", r)
	// extern "C" names resolve to themselves.
	p.Entry = "plain"
	if r, err := CheckCompile(p, "sm_80"); err != nil || r.Lowered != "plain" {
		t.Errorf("extern C entry: %q, %v", r.Lowered, err)
	}
	// A template without its arguments, and a name that is not there.
	for _, entry := range []string{"ns::scale", "scale_fwd"} {
		p.Entry = entry
		_, err := CheckCompile(p, "")
		if err == nil || !strings.Contains(err.Error(), `has no kernel "`+entry+`"`) || !strings.Contains(err.Error(), "kernels in scale.cu: ns::scale, plain") {
			t.Errorf("entry %q: want an error naming it and the kernels, got %v", entry, err)
		}
	}
	// A program that does not compile reports NVRTC's log, not the entry.
	p.Entry, p.Code = "plain", checkSource+"\nint broken = ;\n"
	r, err = CheckCompile(p, "")
	if err == nil || strings.Contains(err.Error(), "has no kernel") || !strings.Contains(r.Log, "scale.cu:") {
		t.Errorf("broken program: %v\nlog: %s", err, r.Log)
	}
	// A template instance that does not compile leads with its error, at
	// the user's line, not with the entry; NVRTC's log is quoted once.
	p.Entry, p.Code = "relu<float>", "template <typename T>\n__global__ void relu(T* y) {\n  y[0] = undefined_thing(y[0]);\n}\n"
	r, err = CheckCompile(p, "")
	if err == nil || !strings.HasPrefix(err.Error(), `NVRTC could not compile scale.cu for sm_90: scale.cu:3: error: identifier "undefined_thing" is undefined`) ||
		strings.Contains(err.Error(), "has no kernel") || strings.Count(err.Error(), "detected during instantiation") != 1 {
		t.Errorf("broken template instance: %v\nlog: %s", err, r.Log)
	}
}

// withELFVersion mends the e_version CUDA 11's NVRTC writes (0x76), which
// debug/elf refuses, on a copy; a cubin with version 1 or no ELF header
// is returned as it is.
func TestWithELFVersion(t *testing.T) {
	hdr := make([]byte, 64)
	copy(hdr, "\x7fELF\x02\x01\x01\x33")
	hdr[0x14] = 0x76
	got := withELFVersion(hdr)
	if got[0x14] != 1 || got[0x15] != 0 || hdr[0x14] != 0x76 {
		t.Errorf("e_version %#x, input %#x", got[0x14], hdr[0x14])
	}
	if !bytes.Equal(got[:0x14], hdr[:0x14]) || !bytes.Equal(got[0x18:], hdr[0x18:]) {
		t.Error("bytes other than e_version changed")
	}
	hdr[0x14] = 1
	if got := withELFVersion(hdr); &got[0] != &hdr[0] {
		t.Error("a cubin with e_version 1 was copied")
	}
	if got := withELFVersion([]byte("not an elf")); string(got) != "not an elf" {
		t.Errorf("non-ELF input changed: %q", got)
	}
}

// sharedSource declares 1088 B of static shared memory in one kernel (two
// arrays), none in another, and only an extern (dynamic) array in a third.
const sharedSource = `
extern "C" __global__ void histo(const unsigned char* in, unsigned* out, int n) {
	__shared__ unsigned bins[256];
	__shared__ float scale[16];
	bins[threadIdx.x] = 0;
	if (threadIdx.x < 16) scale[threadIdx.x] = 1.0f;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins[in[i]], 1u);
	__syncthreads();
	atomicAdd(&out[threadIdx.x], bins[threadIdx.x] * (unsigned)scale[threadIdx.x % 16]);
}
extern "C" __global__ void none(float* y) { y[threadIdx.x] = 1.0f; }
extern "C" __global__ void dynamic(float* y) {
	extern __shared__ float d[];
	d[threadIdx.x] = y[threadIdx.x];
	__syncthreads();
	y[threadIdx.x] = d[threadIdx.x ^ 1];
}
`

// CheckCompile's static shared memory is what the source declares at
// every arch; what the compiler reserves for the system (from sm_90 in
// the kernel's own shared section, with NVRTC 11.8) is reported apart.
func TestCheckCompileStaticShared(t *testing.T) {
	for _, c := range []struct {
		entry, arch    string
		shared         int
		reservedAtMost int // NVRTC 11.8 reserves 1 KiB at sm_90; another toolkit may report 0
	}{
		{"histo", "sm_80", 1088, 0},
		{"histo", "sm_90", 1088, 1024},
		{"none", "sm_90", 0, 1024},
		{"dynamic", "sm_90", 0, 1024},
	} {
		p := profiler.Program{Source: "shared", File: "shared.cu", Code: sharedSource, Entry: c.entry}
		r, err := CheckCompile(p, c.arch)
		if err != nil && (strings.Contains(err.Error(), "NVRTC not found (looked in") || strings.Contains(err.Error(), "Linux")) {
			t.Skip("no NVRTC here: ", err)
		}
		if err != nil {
			t.Fatalf("%s at %s: %v\nlog: %s", c.entry, c.arch, err, r.Log)
		}
		if r.StaticShared != c.shared || r.ReservedShared < 0 || r.ReservedShared > c.reservedAtMost {
			t.Errorf("%s at %s: static shared %d B (want %d), reserved %d B (want 0 to %d)", c.entry, c.arch, r.StaticShared, c.shared, r.ReservedShared, c.reservedAtMost)
		}
		t.Logf("%s at %s with %s: static %d B, reserved %d B", c.entry, c.arch, r.Compiler, r.StaticShared, r.ReservedShared)
	}
}

// reservedInWindow takes the system's 1 KiB out of an entry's shared
// section only where the compiler puts it there: from sm_90, when the
// cubin has no reserved section of its own and the section can hold it.
func TestReservedInWindow(t *testing.T) {
	for _, c := range []struct {
		window, reservedSection int
		arch                    string
		want                    int
	}{
		{1088, -1, "sm_90", 1024},
		{1024, -1, "sm_90a", 1024}, // a kernel with no arrays of its own in a module whose others have some
		{2048, -1, "sm_100", 1024},
		{1088, -1, "sm_89", 0},
		{1088, -1, "sm_80", 0},
		{64, -1, "sm_90", 0},     // smaller than the reservation: none of it is there
		{1088, 1024, "sm_90", 0}, // the toolkit keeps it in .nv.shared.reserved.0
		{1088, 0, "sm_90", 1024}, // NVRTC 13: an empty .nv.shared.reserved.0, the KiB still in the entry's section
		{1024, 0, "sm_90", 1024}, // NVRTC 13, a kernel with no arrays
		{1088, -1, "", 0},
	} {
		if got := reservedInWindow(c.window, c.reservedSection, c.arch); got != c.want {
			t.Errorf("reservedInWindow(%d, %d, %q) = %d, want %d", c.window, c.reservedSection, c.arch, got, c.want)
		}
	}
	for in, want := range map[string]int{"sm_90": 90, "sm_90a": 90, "compute_86": 86, "sm_100f": 100, "hopper": 0, "sm_": 0} {
		if got := smVersion(in); got != want {
			t.Errorf("smVersion(%q) = %d, want %d", in, got, want)
		}
	}
}

// The driver's static shared size loses the system's part only where the
// cubin shows it inside the figure the driver gave.
func TestUserStaticShared(t *testing.T) {
	for _, c := range []struct {
		name   string
		driver int
		f      cubinFacts
		want   int
	}{
		{"sm_90 window holding the reserved KiB", 1088, cubinFacts{shared: 64, reserved: 1024}, 64},
		{"driver counts the user's arrays alone", 64, cubinFacts{shared: 64, reserved: 1024}, 64},
		{"sm_80: nothing reserved in the window", 64, cubinFacts{shared: 64, reserved: 0}, 64},
		{"cubin unreadable", 1088, cubinFacts{shared: -1, reserved: -1}, 1088},
		{"another figure altogether", 2048, cubinFacts{shared: 64, reserved: 1024}, 2048},
	} {
		if got := userStaticShared(c.driver, c.f); got != c.want {
			t.Errorf("%s: userStaticShared(%d, %+v) = %d, want %d", c.name, c.driver, c.f, got, c.want)
		}
	}
}

// A kernel whose body starts on its signature's line and calls an inlined
// device function: NVRTC 11.x with -lineinfo crashed the whole process on
// it (optionsFor drops the flag there). With the bug back, this test
// binary dies instead of failing politely.
func TestOneLineKernelCompiles(t *testing.T) {
	src := "__device__ void twice(float* y, int n){y[n]*=2;}\n__global__ void k(float* y, int n){ twice(y, n); }\n"
	p := profiler.Program{Source: "oneline", File: "oneline.cu", Code: src, Entry: "k"}
	r, err := CheckCompile(p, "")
	if err != nil && (strings.Contains(err.Error(), "NVRTC not found (looked in") || strings.Contains(err.Error(), "Linux")) {
		t.Skip("no NVRTC here: ", err)
	}
	if err != nil {
		t.Fatalf("CheckCompile: %v\nlog: %s", err, r.Log)
	}
}
