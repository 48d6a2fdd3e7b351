package metal

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestParseChip(t *testing.T) {
	cases := []struct {
		name, arch string
		want       Chip
		family     string
	}{
		{"Apple M1", "", Chip{1, ""}, "Apple7"},
		{"Apple M1 Pro", "applegpu_g13s", Chip{1, "Pro"}, "Apple7"},
		{"Apple M1 Max", "", Chip{1, "Max"}, "Apple7"},
		{"Apple M2 Ultra", "", Chip{2, "Ultra"}, "Apple8"},
		{"Apple M3 Max", "applegpu_g15c", Chip{3, "Max"}, "Apple9"},
		{"Apple M4 Pro", "", Chip{4, "Pro"}, "Apple9"},
		{"", "applegpu_g13g", Chip{1, ""}, "Apple7"},
		{"", "applegpu_g13d", Chip{1, "Ultra"}, "Apple7"},
		{"", "applegpu_g14c", Chip{2, "Max"}, "Apple8"},
		{"Apple Paravirtual device", "", Chip{}, ""},
		{"AMD Radeon Pro 5500M", "", Chip{}, ""},
	}
	for _, c := range cases {
		got := ParseChip(c.name, c.arch)
		if got != c.want {
			t.Errorf("ParseChip(%q, %q) = %+v, want %+v", c.name, c.arch, got, c.want)
		}
		g, ok := GenerationFor(got.Number)
		if ok != (c.family != "") || g.Family != c.family {
			t.Errorf("%s: generation %q (ok %v), want %q", got, g.Family, ok, c.family)
		}
	}
}

func TestFlushBytes(t *testing.T) {
	cases := []struct {
		chip Chip
		want int64
	}{
		{Chip{1, ""}, 16 << 20},
		{Chip{1, "Pro"}, 48 << 20},
		{Chip{3, "Max"}, 96 << 20},
		{Chip{2, "Ultra"}, 192 << 20},
		{Chip{}, 96 << 20},
	}
	for _, c := range cases {
		if got := FlushBytes(c.chip); got != c.want {
			t.Errorf("FlushBytes(%s) = %d, want %d", c.chip, got, c.want)
		}
	}
}

func attnDispatch(threads, tgm int) *profiler.Dispatch {
	return &profiler.Dispatch{Name: "attn_fwd", Group: [3]int{threads, 1, 1}, Grid: [3]int{8, 8, 1},
		TGM: []profiler.TGMItem{{Name: "all", Bytes: tgm}}}
}

func TestDeviceInfoAndOccupancy(t *testing.T) {
	m1 := DeviceInfo(RawDevice{Name: "Apple M1 Max", Arch: "applegpu_g13c", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024,
		WorkingSetBytes: 48 << 30, HasTimestampSet: true, StageBoundary: true, Cores: 32})
	if m1.TGMPerUnit != 65536 || m1.MaxThreadsPerUnit != 3072 || m1.TGMPerGroup != 32768 || m1.MaxThreadsPerGroup != 1024 ||
		m1.Timer != TimerCounters || m1.CacheBytes != 48<<20 || m1.Units != 32 || m1.UnitName != "core" || m1.Backend != "metal" || m1.SIMDWidth != 32 {
		t.Fatalf("M1 Max info: %+v", m1)
	}
	type occCase struct {
		name       string
		dev        profiler.DeviceInfo
		threads    int
		tgm        int
		attrs      profiler.KernelAttrs
		groups     int
		limiter    string
		confidence string
		available  bool
	}
	cases := []occCase{
		// attn_fwd BQ=32 BK=16 WM=4 WN=1 D=64 f16: Q 32·72·2 + K,V 16·72·2 each = 9216 B, 128 threads.
		{"M1 small tile", m1, 128, 9216, profiler.KernelAttrs{MaxThreads: 1024}, 7, "tgm", "", true},
		// D=256 bf16 at BQ=32, BK=16: 16896+8448+8448 = 33792 B > 32 KB per group, but per core 1 group.
		{"M1 one group by TGM", m1, 128, 30000, profiler.KernelAttrs{MaxThreads: 1024}, 2, "tgm", "", true},
		{"M1 threads bound", m1, 1024, 1024, profiler.KernelAttrs{MaxThreads: 1024}, 3, "threads", "", true},
		{"register pressure", m1, 1024, 1024, profiler.KernelAttrs{MaxThreads: 512}, 0, "", "", false},
	}
	m3 := DeviceInfo(RawDevice{Name: "Apple M3 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
	cases = append(cases, occCase{"M3 low confidence", m3, 128, 9216, profiler.KernelAttrs{}, 7, "tgm", "low", true})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Occupancy(c.dev, attnDispatch(c.threads, c.tgm), c.attrs)
			if o.Available != c.available || o.GroupsPerUnit != c.groups || (c.available && o.Limiter != c.limiter) || o.Confidence != c.confidence || !o.Estimate {
				t.Fatalf("got %+v", o)
			}
			if !c.available && !strings.Contains(o.Reason, "register pressure") {
				t.Fatalf("reason %q", o.Reason)
			}
		})
	}
	if m3.Timer != TimerCmdBuf || !strings.Contains(strings.Join(m3.Notes, "\n"), "Dynamic Caching") {
		t.Errorf("M3 without counters: timer %s notes %v", m3.Timer, m3.Notes)
	}
	unknown := DeviceInfo(RawDevice{Name: "Apple Paravirtual device", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
	o := Occupancy(unknown, attnDispatch(128, 9216), profiler.KernelAttrs{})
	if o.Available || o.Confidence != "low" {
		t.Errorf("unknown device: %+v", o)
	}
}

func TestBudgetWarnsOnRegisterPressure(t *testing.T) {
	d := attnDispatch(1024, 1024)
	b := run.BuildBudget(d, DeviceInfo(RawDevice{Name: "Apple M1", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024}), profiler.KernelAttrs{StaticTGM: 1024, MaxThreads: 896})
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0], "allows 896") {
		t.Fatalf("warnings %v", b.Warnings)
	}
}

func TestDeviceInfoFeatures(t *testing.T) {
	m1 := DeviceInfo(RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
	if !m1.Has(profiler.FeatureSimdgroupMatrix) || m1.Has(profiler.FeatureCUDAKernels) {
		t.Errorf("M1 Max features %v: want simdgroup_matrix only", m1.Features)
	}
	unknown := DeviceInfo(RawDevice{Name: "Apple Paravirtual device", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024})
	if len(unknown.Features) != 0 {
		t.Errorf("unknown GPU features %v: want none claimed", unknown.Features)
	}
}
