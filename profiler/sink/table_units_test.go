package sink

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// slowCPUResult is a bf16 attention run as the CPU backend measures it:
// tens of ms and tens of MB/s, figures that a fixed µs / GB/s format
// printed as "40227.28 µs" and "0.0 GB/s".
func slowCPUResult(spec profiler.Spec) profiler.Result {
	return profiler.Result{
		Spec:   spec,
		Status: profiler.StatusOK,
		Stats: profiler.Stats{N: 12, Median: 40.2e6, P10: 39.1e6, P90: 41.4e6, Min: 38.9e6,
			CILo: 39.9e6, CIHi: 40.6e6, CV: 0.02},
		TFLOPS: 0.00134,
		GBps:   0.0123,
	}
}

func TestSlowRunsReadInTheirUnits(t *testing.T) {
	r := slowCPUResult(attnSpec(profiler.BF16, false))
	block := FormatResult(r)
	for _, want := range []string{"median 40.2 ms", "p10–p90 39.1 ms–41.4 ms", "min 38.9 ms", "1.34 GFLOP/s", "12.3 MB/s"} {
		if !strings.Contains(block, want) {
			t.Errorf("result block lacks %q:\n%s", want, block)
		}
	}
	var buf bytes.Buffer
	tab := NewTable(&buf)
	tab.Write(r)
	row := strings.Split(strings.TrimSpace(buf.String()), "\n")[1]
	for _, want := range []string{"40.2 ms", "39.1 ms–41.4 ms", "1.34 GFLOP/s", "12.3 MB/s"} {
		if !strings.Contains(row, want) {
			t.Errorf("table row lacks %q:\n%s", want, buf.String())
		}
	}
	for _, out := range []string{block, buf.String()} {
		if strings.Contains(out, " 0.0 ") || strings.Contains(out, "0.000") {
			t.Errorf("a measured rate prints as zero:\n%s", out)
		}
	}
}

func attnSpec(dt profiler.DType, causal bool) profiler.Spec {
	return profiler.Spec{Kernel: "attn_fwd", DType: dt,
		Knobs: map[string]int{"BQ": 32, "BK": 16, "WM": 2, "WN": 1},
		Dims:  map[string]int{"B": 1, "H": 4, "Hkv": 2, "Lq": 128, "Lk": 128, "D": 64},
		Flags: map[string]bool{"causal": causal}}
}

// TestTableColumnsAlign: rows whose specs are longer than others (a flag
// such as causal) keep every column under its header.
func TestTableColumnsAlign(t *testing.T) {
	specs := []profiler.Spec{
		attnSpec(profiler.F32, false),
		attnSpec(profiler.F32, true),
		{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 512, "cols": 1024}},
	}
	// Told the specs, every row lines up under the header; left to learn
	// them row by row, the rows from the longest on line up.
	for _, c := range []struct {
		widen bool
		from  int
	}{{true, 0}, {false, 2}} {
		var buf bytes.Buffer
		tab := NewTable(&buf)
		if c.widen {
			tab.Widen(specs)
		}
		for _, s := range specs {
			tab.Write(slowCPUResult(s))
		}
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		if !strings.Contains(lines[2], "causal") {
			t.Fatalf("row 2 is not the causal one:\n%s", buf.String())
		}
		medianEnd := func(l string) int {
			if strings.HasPrefix(l, "spec") {
				return strings.Index(l, "median") + len("median")
			}
			return strings.Index(l, "40.2 ms") + len("40.2 ms")
		}
		want := medianEnd(lines[c.from])
		for _, l := range lines[c.from:] {
			if got := medianEnd(l); got != want {
				t.Errorf("widen=%v: median column ends at byte %d, not %d:\n%s", c.widen, got, want, buf.String())
			}
		}
	}
}
