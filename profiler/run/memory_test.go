package run_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// TestHostMemoryRefusedBeforeAllocating: a spec that passes the index
// checks but would not fit in host memory is an invalid row naming the
// sizes and the limit, and nothing is allocated; a spec that fits runs.
func TestHostMemoryRefusedBeforeAllocating(t *testing.T) {
	old := run.HostMemory
	defer func() { run.HostMemory = old }()
	run.HostMemory = func() (int64, string) { return 1 << 20, "test limit" } // 1 MiB
	b := &enginetest.MemBackend{}
	r := run.NewRunner(b)
	// 1<<18 f32 elements: x and out are 1 MiB each, plus float32 copies.
	res := r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 1 << 18}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusInvalid {
		t.Fatalf("status %s (%s), want invalid", res.Status, res.Error)
	}
	for _, want := range []string{"needs 3.0 MiB of host memory", "input copies 1.0 MiB", "output copies 1.0 MiB", "staging 1.0 MiB", "1.0 MiB available (test limit; 90% usable)", "reduce N=262144"} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("error %q lacks %q", res.Error, want)
		}
	}
	if b.Allocs != 0 {
		t.Errorf("%d buffers allocated before the refusal", b.Allocs)
	}
	res = r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 1000}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusOK {
		t.Errorf("small spec: %s %s", res.Status, res.Error)
	}
}

func TestDeviceMemoryRefused(t *testing.T) {
	old := run.HostMemory
	defer func() { run.HostMemory = old }()
	run.HostMemory = func() (int64, string) { return 0, "" } // unknown: device check only
	r := run.NewRunner(&enginetest.MemBackend{})             // 1 GiB device
	res := r.Run(context.Background(), profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Dims: map[string]int{"N": 1 << 28}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusInvalid || !strings.Contains(res.Error, "needs 2.00 GiB of device memory (2 buffers) but test device has 1.00 GiB") {
		t.Errorf("%s: %s", res.Status, res.Error)
	}
}

func TestNeedOfCPUCountsBuffersAndFlush(t *testing.T) {
	plan := &profiler.Plan{Buffers: []profiler.BufferSpec{
		{Name: "x", Role: profiler.In, Type: profiler.BF16, Elems: 1000, Init: profiler.InitNormal},
		{Name: "out", Role: profiler.Out, Type: profiler.BF16, Elems: 1000, Init: profiler.InitPoison},
	}}
	dev := profiler.DeviceInfo{Backend: "cpu", CacheBytes: 32 << 20, MemoryBytes: 16 << 30}
	cold := run.NeedOf(plan, dev, profiler.CacheCold)
	// buffers 4000 + input copy 4000 + output copy 4000 + staging 2000 + flush 64 MiB
	if cold.Host() != 14000+64<<20 {
		t.Errorf("cold %+v host %d", cold, cold.Host())
	}
	if hot := run.NeedOf(plan, dev, profiler.CacheHot); hot.Host() != 14000 {
		t.Errorf("hot %+v", hot)
	}
	dev.Backend = "cuda"
	if gpu := run.NeedOf(plan, dev, profiler.CacheCold); gpu.Host() != 10000 || gpu.Device != 4000 {
		t.Errorf("cuda %+v", gpu)
	}
}

func TestOutOfMemoryLastWords(t *testing.T) {
	cases := map[string]bool{
		"fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw({0x5d...})\n\truntime/panic.go:1101": true,
		"runtime: cannot allocate memory\nfatal error: out of memory":                                              true,
		"mmap: Cannot allocate memory":                                        true,
		"panic: index out of range [3] with length 3\ngoroutine 1 [running]:": false,
		"": false,
	}
	for words, want := range cases {
		line, got := run.OutOfMemory(words)
		if got != want {
			t.Errorf("%q: %v want %v", words, got, want)
		}
		if got && strings.Contains(line, "\n") {
			t.Errorf("line %q", line)
		}
	}
}
