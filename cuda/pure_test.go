package cuda

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestArchName(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         string
	}{{9, 0, "sm_90a"}, {8, 0, "sm_80"}, {8, 9, "sm_89"}, {7, 5, "sm_75"}, {10, 0, "sm_100"}, {12, 0, "sm_120"}} {
		if got := ArchName(c.major, c.minor); got != c.want {
			t.Errorf("ArchName(%d, %d) = %q, want %q", c.major, c.minor, got, c.want)
		}
	}
}

func TestPeakFLOPS(t *testing.T) {
	for _, c := range []struct {
		name       string
		major      int
		bf16, f32  float64
		wantSource string
	}{
		{"NVIDIA H100 80GB HBM3", 9, 989.4e12, 66.9e12, "H100 SXM datasheet"},
		{"NVIDIA H100 PCIe", 9, 756e12, 51.2e12, "H100 PCIe datasheet"},
		{"NVIDIA H100 NVL", 9, 835.5e12, 60e12, "H100 NVL datasheet"},
		{"NVIDIA H200", 9, 989.4e12, 66.9e12, "H200 datasheet"},
		{"NVIDIA A100-SXM4-80GB", 8, 312e12, 19.5e12, "A100 datasheet"},
		{"NVIDIA A10", 8, 125e12, 31.2e12, "A10 datasheet"},
		{"NVIDIA L4", 8, 121e12, 30.3e12, "L4 datasheet"},
		{"NVIDIA L40S", 8, 362e12, 91.6e12, "L40S datasheet"},
		{"NVIDIA GeForce RTX 4090", 8, 165.2e12, 82.6e12, "Ada whitepaper"},
	} {
		p, src := PeakFLOPS(c.name, c.major)
		if src != c.wantSource || p[profiler.BF16] != c.bf16 || p[profiler.F32] != c.f32 || p[profiler.F16] != c.bf16 {
			t.Errorf("PeakFLOPS(%q) = %v from %q, want bf16=f16=%g f32=%g from %q", c.name, p, src, c.bf16, c.f32, c.wantSource)
		}
	}
	// No bf16 tensor cores before Ampere; unknown devices get nothing.
	if p, _ := PeakFLOPS("Tesla V100-SXM2-16GB", 7); p[profiler.BF16] != 0 || p[profiler.F16] != 125e12 {
		t.Errorf("V100: %v, want f16 125e12 and no bf16", p)
	}
	if p, src := PeakFLOPS("NVIDIA Mystery GPU", 9); p != nil || src != "" {
		t.Errorf("unknown GPU: got %v %q, want nil", p, src)
	}
	// The compute capability guards against a name collision.
	if p, _ := PeakFLOPS("NVIDIA H100", 8); p != nil {
		t.Errorf("H100 name with cc 8.x matched: %v", p)
	}
}

func TestPeakBandwidth(t *testing.T) {
	// H100 SXM: HBM3 at 2619 MHz on a 5120-bit bus is 3.35 TB/s.
	if got := PeakBandwidth(2619000, 5120); got < 3.35e12 || got > 3.36e12 {
		t.Errorf("PeakBandwidth(2619 MHz, 5120 bit) = %g, want 3.35e12", got)
	}
	if got := PeakBandwidth(0, 5120); got != 0 {
		t.Errorf("no clock: %g, want 0", got)
	}
}

func TestCompileKey(t *testing.T) {
	m := []profiler.Macro{{Name: "BQ", Value: "64"}, {Name: "DTYPE", Value: "2"}}
	h := map[string]string{"a.cuh": "x", "b.cuh": "y"}
	base := CompileKey("src", h, m, "sm_90a", "nvrtc-13.0")
	if base != CompileKey("src", map[string]string{"b.cuh": "y", "a.cuh": "x"}, m, "sm_90a", "nvrtc-13.0") {
		t.Error("key depends on header map order")
	}
	for name, k := range map[string]string{
		"source":   CompileKey("src ", h, m, "sm_90a", "nvrtc-13.0"),
		"header":   CompileKey("src", map[string]string{"a.cuh": "x", "b.cuh": "z"}, m, "sm_90a", "nvrtc-13.0"),
		"macro":    CompileKey("src", h, []profiler.Macro{{Name: "BQ", Value: "32"}, {Name: "DTYPE", Value: "2"}}, "sm_90a", "nvrtc-13.0"),
		"arch":     CompileKey("src", h, m, "sm_80", "nvrtc-13.0"),
		"compiler": CompileKey("src", h, m, "sm_90a", "nvrtc-12.8"),
		// Length-prefixing keeps "ab"+"c" apart from "a"+"bc".
		"boundary": CompileKey("src", map[string]string{"a.cuh": "xb", ".cuh": "y"}, m, "sm_90a", "nvrtc-13.0"),
	} {
		if k == base {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
}

func TestCubinCacheDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cuda")
	c := newCubinCache(dir)
	if _, ok := c.get("k1"); ok {
		t.Fatal("empty cache hit")
	}
	want := cacheEntry{Cubin: []byte("cubin-bytes"), Lowered: "_Z6kernelIfLi4EEvPf"}
	c.put("k1", want)
	if e, ok := c.get("k1"); !ok || string(e.Cubin) != "cubin-bytes" || e.Lowered != want.Lowered || c.hits != 1 {
		t.Fatalf("memory layer: %+v %v hits=%d", e, ok, c.hits)
	}
	// A new cache over the same dir (a later run) finds it on disk, with
	// the lowered name.
	c2 := newCubinCache(dir)
	if e, ok := c2.get("k1"); !ok || string(e.Cubin) != "cubin-bytes" || e.Lowered != want.Lowered || c2.disk != 1 {
		t.Fatalf("disk layer: %+v %v disk=%d", e, ok, c2.disk)
	}
	if _, err := os.Stat(filepath.Join(dir, "k1"+cacheSuffix)); err != nil {
		t.Fatal(err)
	}
	// A file of the old layout (a bare cubin, no lowered name) or a broken
	// one is a miss, never a wrong entry.
	os.WriteFile(filepath.Join(dir, "old.cubin"), []byte("old-cubin"), 0o644)
	os.WriteFile(filepath.Join(dir, "old"+cacheSuffix), []byte("old-cubin"), 0o644)
	if e, ok := newCubinCache(dir).get("old"); ok {
		t.Fatalf("an old-format file was read as %+v", e)
	}
	// No dir: memory only, no error.
	c3 := newCubinCache("")
	c3.put("k", cacheEntry{Cubin: []byte("x")})
	if _, ok := c3.get("k"); !ok {
		t.Fatal("memory-only cache lost its entry")
	}
}

func TestCacheEntryEncoding(t *testing.T) {
	for _, e := range []cacheEntry{
		{Cubin: []byte{0x7f, 'E', 'L', 'F', 0, 1}, Lowered: "_ZN2ns6kernelEv"},
		{Cubin: []byte("c"), Lowered: ""},
		{Cubin: []byte("c"), Lowered: strings.Repeat("x", 300)}, // a two-byte length
	} {
		got, err := decodeCacheEntry(e.encode())
		if err != nil || got.Lowered != e.Lowered || string(got.Cubin) != string(e.Cubin) {
			t.Errorf("round trip of %q: %+v, %v", e.Lowered, got, err)
		}
	}
	good := cacheEntry{Cubin: []byte("cubin"), Lowered: "k"}.encode()
	for name, b := range map[string][]byte{
		"empty":           nil,
		"bare cubin":      []byte("\x7fELF..."),
		"other version":   append([]byte("mltop-cuda-cache-1\n"), good[len(cacheMagic):]...),
		"name too long":   append([]byte(cacheMagic), 0x7f, 'k'),
		"no cubin":        cacheEntry{Lowered: "k"}.encode(),
		"broken varint":   append([]byte(cacheMagic), 0xff),
		"truncated entry": good[:len(cacheMagic)+1],
	} {
		if e, err := decodeCacheEntry(b); err == nil {
			t.Errorf("%s: decoded as %+v, want an error", name, e)
		}
	}
}

func TestLimiterFor(t *testing.T) {
	h100 := profiler.DeviceInfo{MaxThreadsPerUnit: 2048, RegistersPerUnit: 65536, TGMPerUnit: 233472, MaxGroupsPerUnit: 32}
	for _, c := range []struct {
		name string
		in   occupancyInput
		want string
	}{
		// 128 threads × 255 regs: 64 K / (4 warps × 8192) = 2 blocks.
		{"registers", occupancyInput{Threads: 128, Registers: 255, SharedBytes: 20000, ReservedShared: 1024, DriverBlocks: 2}, "registers"},
		// 70 KiB of shared memory: 3 blocks.
		{"tgm", occupancyInput{Threads: 128, Registers: 64, SharedBytes: 70 << 10, ReservedShared: 1024, DriverBlocks: 3}, "tgm"},
		// 1024 threads: 2 blocks by threads.
		{"threads", occupancyInput{Threads: 1024, Registers: 32, SharedBytes: 1024, ReservedShared: 1024, DriverBlocks: 2}, "threads"},
		// 32 threads, few registers: the 32-block cap.
		{"groups", occupancyInput{Threads: 32, Registers: 16, DriverBlocks: 32}, "groups"},
	} {
		if got := limiterFor(h100, c.in); got != c.want {
			t.Errorf("%s: limiterFor = %q, want %q", c.name, got, c.want)
		}
	}
}
