package attnbwd_test

import (
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels/all"
	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	"github.com/mltop/mltop/profiler"
)

// reportText is the report's text and cells, each cell between spaces
// (how sink.WriteReport lays them out is its own test's business).
func reportText(rep profiler.Report) string {
	var b strings.Builder
	for _, sec := range rep {
		b.WriteString(sec.Text)
		for _, row := range sec.Table {
			b.WriteString(" " + strings.Join(row, " ") + " \n")
		}
	}
	return b.String()
}

func reportRow(kernel string, d, l int, causal bool, medianUS float64, mem int64, status string) profiler.Result {
	return profiler.Result{
		Spec: profiler.Spec{Kernel: kernel, DType: profiler.F16,
			Dims:  map[string]int{"B": 1, "H": 32, "Hkv": 32, "D": d, "Lq": l, "Lk": l},
			Flags: map[string]bool{"causal": causal}},
		Stats: profiler.Stats{N: 50, Median: medianUS * 1e3}, MemoryBytes: mem, Status: profiler.Status(status),
	}
}

func TestReportTables(t *testing.T) {
	rows := []profiler.Result{
		// seed 001's D=64 L=1024 causal: unfused 0.044 s, fused 0.033 s → 1.33x
		reportRow("attn_bwd_unfused", 64, 1024, true, 44000, 239_000_000, "ok"),
		reportRow("attn_bwd", 64, 1024, true, 33000, 42_000_000, "ok"),
		reportRow("attn_bwd", 64, 1024, true, 40000, 42_000_000, "ok"), // worse knobs: not chosen
		reportRow("attn_bwd_atomic", 64, 1024, true, 88000, 50_000_000, "ok"),
		// dense: fused slower
		reportRow("attn_bwd_unfused", 64, 1024, false, 40000, 239_000_000, "ok"),
		reportRow("attn_bwd", 64, 1024, false, 57000, 42_000_000, "ok"),
		reportRow("attn_bwd", 128, 4096, false, 1000, 1, "mismatch"),
	}
	rep, err := attnbwd.Report(rows)
	if err != nil {
		t.Fatal(err)
	}
	out := reportText(rep)
	for _, want := range []string{
		"Causal attention, f16", "Dense attention, f16",
		"44.0", "33.0", "88.0", "1.33x", "0.50x", // ms; 44/33 and 44/88
		"0.70x",                  // 40/57
		"239 MB", "42 MB", "82%", // 1 − 42/239
		"67 MB", // 32·1024²·2 B
		"1 row with a status other than ok was left out",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "1.10x") { // 44/40 would mean the worse knobs were picked
		t.Errorf("report did not take the best knobs:\n%s", out)
	}
}

func TestReportNeedsBothSides(t *testing.T) {
	for _, c := range []struct {
		name string
		rows []profiler.Result
		want string
	}{
		{"no unfused", []profiler.Result{reportRow("attn_bwd", 64, 512, false, 1, 1, "ok")}, "attn_bwd_unfused"},
		{"no fused", []profiler.Result{reportRow("attn_bwd_unfused", 64, 512, false, 1, 1, "ok")}, "attn_bwd or attn_bwd_atomic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := attnbwd.Report(c.rows)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}

// The memory table names a GQA, batched shape in full and puts each
// number in its own cell.
func TestReportMemoryCells(t *testing.T) {
	gqa := func(r profiler.Result) profiler.Result {
		r.Spec.DType = profiler.BF16
		r.Spec.Dims["Hkv"], r.Spec.Dims["B"] = 8, 2
		return r
	}
	rep, err := attnbwd.Report([]profiler.Result{
		gqa(reportRow("attn_bwd_unfused", 128, 2048, true, 261000, 969_000_000, "ok")),
		gqa(reportRow("attn_bwd", 128, 2048, true, 392000, 168_000_000, "ok")),
	})
	if err != nil {
		t.Fatal(err)
	}
	var memory [][]string
	for _, sec := range rep {
		if strings.Contains(sec.Text, "Memory:") {
			memory = sec.Table
		}
	}
	want := [][]string{
		{"Config", "Unfused Peak", "attn_bwd Peak", "Savings", "Attn Matrix Size"},
		{"bf16 D=128 L=2048 causal GQA(32/8) B=2", "969 MB", "168 MB", "83%", "537 MB"},
	}
	if len(memory) != len(want) {
		t.Fatalf("memory table %q, want %q", memory, want)
	}
	for i := range want {
		if strings.Join(memory[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("memory row %d: %q, want %q", i, memory[i], want[i])
		}
	}
}
