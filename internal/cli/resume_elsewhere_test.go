package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --resume runs again a row that another backend or device could not run
// (invalid, error, compile_error: a user kernel's rows from a CPU sweep,
// resumed on the GPU), says so before the banner, and leaves one row per
// spec: the new row replaces the old. A row its own backend and device
// could not run (a family's rule) stays, and so does a measured one.
func TestResumeRunsAgainWhatAnotherBackendCouldNotRun(t *testing.T) {
	sw := writeFile(t, "s.yaml", fastDefaults+`backend: cpu
sweeps:
  - kernel: softmax_bwd
    knobs: {WG: [32, 64, 128]}
    dims: {rows: 2, cols: 8}
  - kernel: attn_fwd
    dtypes: [f16]
    knobs: {BQ: 16, BK: 16, WM: 4, WN: 1}
    dims: {H: 2, Hkv: 1, Lq: 40, Lk: 40, D: 64}
`)
	out := filepath.Join(t.TempDir(), "s.csv")
	args := []string{"--config", sw, "--isolate", "off", "--quiet"}
	if code, _, stderr := runMain(t, append(args, "--csv", out)...); code != 2 { // WM=4 needs BQ a multiple of 32: one invalid row
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	// As if WG=32 had been recorded on Metal (invalid), WG=64 on another CPU (error).
	f, _ := os.Open(out)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 5 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	here := recs[1][col["device"]]
	for _, r := range recs[1:] {
		switch r[col["WG"]] {
		case "32":
			r[col["backend"]], r[col["device"]], r[col["status"]] = "metal", "Apple M2", "invalid"
		case "64":
			r[col["device"]], r[col["status"]] = "Other CPU", "error"
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.WriteAll(recs)
	os.WriteFile(out, []byte(b.String()), 0o644)

	code, _, stderr := runMain(t, append(args, "--resume", out, "--dry-run")...)
	if code != 0 || !strings.Contains(stderr, "1 row recorded on Other CPU (1 error), 1 row recorded on metal (1 invalid) would run again on cpu ("+here+")") || !strings.Contains(stderr, "2 specs to run from") {
		t.Errorf("--dry-run: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runMain(t, append(args, "--resume", out)...)
	want := "mltop: --resume " + out + ": 1 row recorded on Other CPU (1 error), 1 row recorded on metal (1 invalid) run again on cpu (" + here + "): the backend or device that wrote them could not run them, this one may; each new row replaces its old one (to keep them instead, resume on Other CPU or metal)\n"
	if at, banner := strings.Index(stderr, want), strings.Index(stderr, "2 specs to run from"); code != 0 || at < 0 || banner < at {
		t.Errorf("exit %d; want %q before the banner:\n%s", code, want, stderr)
	}
	rows := readCSV(t, out)
	seen := map[string]string{}
	for _, r := range rows {
		key := r["kernel"] + " WG=" + r["WG"]
		if _, twice := seen[key]; twice {
			t.Errorf("two rows of %s", key)
		}
		seen[key] = r["backend"] + "/" + r["device"] + "/" + r["status"]
	}
	for key, want := range map[string]string{
		"softmax_bwd WG=32": "cpu/" + here + "/ok", "softmax_bwd WG=64": "cpu/" + here + "/ok",
		"softmax_bwd WG=128": "cpu/" + here + "/ok", "attn_fwd WG=": "cpu/" + here + "/invalid",
	} {
		if seen[key] != want {
			t.Errorf("%s: %q, want %q", key, seen[key], want)
		}
	}
	if len(rows) != 4 {
		t.Errorf("%d rows, want 4: %v", len(rows), seen)
	}
	// Now all four were recorded here: nothing runs again.
	code, _, stderr = runMain(t, append(args, "--resume", out)...)
	if code != 0 || !strings.Contains(stderr, "all its 4 specs are already in the --resume file") || strings.Contains(stderr, "run again") {
		t.Errorf("second resume: exit %d:\n%s", code, stderr)
	}
}
