package profiler_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
)

func reportRow(kernel string, d, l int, causal bool, medianUS float64, mem int64, status string) map[string]string {
	c := "0"
	if causal {
		c = "1"
	}
	return map[string]string{
		"kernel": kernel, "dtype": "f16", "B": "1", "H": "32", "Hkv": "32", "D": itoa(d), "Lq": itoa(l), "Lk": itoa(l),
		"causal": c, "median_us": ftoa(medianUS), "memory_bytes": itoa64(mem), "status": status,
	}
}

func itoa(v int) string     { return strconv.Itoa(v) }
func itoa64(v int64) string { return strconv.FormatInt(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestReportTables(t *testing.T) {
	rows := []map[string]string{
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
	var b strings.Builder
	if err := profiler.Report(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Causal attention, f16", "Dense attention, f16",
		"44.0", "33.0", "88.0", "1.33x", "0.50x", // ms; 44/33 and 44/88
		"0.70x",                  // 40/57
		"239 MB", "42 MB", "82%", // 1 − 42/239
		"67 MB", // 32·1024²·2 B
		"1 rows with a status other than ok were left out",
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
		rows []map[string]string
		want string
	}{
		{"no unfused", []map[string]string{reportRow("attn_bwd", 64, 512, false, 1, 1, "ok")}, "attn_bwd_unfused"},
		{"no fused", []map[string]string{reportRow("attn_bwd_unfused", 64, 512, false, 1, 1, "ok")}, "attn_bwd or attn_bwd_atomic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := profiler.Report(&strings.Builder{}, c.rows)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %s", err, c.want)
			}
		})
	}
}

func TestReportFileReadsSweepCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bwd.csv")
	csv := "kernel,dtype,B,H,Hkv,D,Lq,Lk,causal,median_us,memory_bytes,status\n" +
		"attn_bwd_unfused,bf16,1,32,8,128,2048,2048,1,261000,969000000,ok\n" +
		"attn_bwd,bf16,1,32,8,128,2048,2048,1,392000,168000000,ok\n"
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := profiler.ReportFile(&b, path); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"261", "392", "0.67x", "969 MB", "168 MB", "83%", "GQA(32/8)", "bf16 D=128 L=2048 causal"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if err := profiler.ReportFile(&b, filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Error("a missing file must be an error")
	}
}
