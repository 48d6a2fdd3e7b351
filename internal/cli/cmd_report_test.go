package cli

import (
	"path/filepath"
	"strings"
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

// A user kernel's tuning table (recorded on an H100) renders with the
// kernel's manifest; without it the error says to add --kernel.
func TestReportUserKernelTable(t *testing.T) {
	table := filepath.Join("internal", "cli", "testdata", "user_matmul5-table.csv") // tests run from the repository's root
	code, _, stderr := runIsolated(t, "report", table)
	if code != 2 || !strings.Contains(stderr, `unknown kernel "user_matmul5"`) || !strings.Contains(stderr, "add --kernel PATH") {
		t.Errorf("without --kernel: exit %d, stderr:\n%s", code, stderr)
	}
	code, stdout, stderr := runIsolated(t, "report", "--kernel", "examples/tune_matmul", table)
	if code != 0 || !strings.Contains(stdout, "tuning table of user_matmul5 (median_us, on NVIDIA H100 80GB HBM3)") ||
		!strings.Contains(stdout, "M=1024 N=1024 K=1024") || !strings.Contains(stdout, "BM=64 BN=64 BK=32 TM=8 TN=2 PAD=4") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
