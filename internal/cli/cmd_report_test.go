package cli

import (
	"path/filepath"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
)

// TestReportReadsSweepCSV: `mltop report` reads a sweep's CSV through the
// sink's decoder and prints the family's tables exactly so.
func TestReportReadsSweepCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bwd.csv")
	row := func(kernel string, medianUS float64, mem int64) profiler.Result {
		return profiler.Result{
			Spec: profiler.Spec{Kernel: kernel, DType: profiler.BF16,
				Dims:  map[string]int{"B": 1, "H": 32, "Hkv": 8, "D": 128, "Lq": 2048, "Lk": 2048},
				Flags: map[string]bool{"causal": true}},
			Stats: profiler.Stats{N: 50, Median: medianUS * 1e3}, MemoryBytes: mem, Status: profiler.StatusOK,
		}
	}
	w, err := sink.OpenCSV(path, sink.ColumnsFor([]profiler.Spec{{Kernel: "attn_bwd_unfused"}, {Kernel: "attn_bwd"}}), false)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(row("attn_bwd_unfused", 261000, 969_000_000))
	w.Write(row("attn_bwd", 392000, 168_000_000))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runMain(t, "report", path)
	want := `Performance: fused vs unfused (speedup > 1.0x means fused is faster; best knobs per cell)

Causal attention, bf16
    D     L  Unfused (ms)  attn_bwd (ms)  Speedup
  128  2048           261            392    0.67x

Memory: peak device memory (all buffers of the plan; MB = 10^6 B)
                              Config  Unfused Peak  attn_bwd Peak  Savings  Attn Matrix Size
  bf16 D=128 L=2048 causal GQA(32/8)        969 MB         168 MB      83%            268 MB

Attn Matrix Size = B·H·Lq·Lk in the storage type (seed 001's column); the unfused plan holds P and dS in f32.
`
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stderr %s\ngot:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
}
