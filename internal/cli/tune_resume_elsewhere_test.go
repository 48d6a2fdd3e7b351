package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A search's --resume (mltop tune, a sweep's search: block) follows the
// sweep's rule: a row that another backend or device could not run
// (invalid, error, compile_error) is not told to the search but measured
// again here, stderr says so before the search, and the new row replaces
// the old one in the file.
func TestTuneResumeRunsAgainWhatAnotherBackendCouldNotRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.csv")
	args := tuneArgsFor("softmax_bwd", "--dims", "rows=8,cols=64", "--budget", "2", "--strategy", "random")
	if code, _, stderr := runMain(t, append(args, "--csv", out)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// As if every row had been recorded on Metal, which could not run it.
	f, _ := os.Open(out)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) < 3 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	here := recs[1][col["device"]]
	for _, r := range recs[1:] {
		r[col["backend"]], r[col["device"]], r[col["status"]] = "metal", "Apple M2", "invalid"
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.WriteAll(recs)
	os.WriteFile(out, []byte(b.String()), 0o644)
	n := len(recs) - 1

	code, stdout, stderr := runMain(t, append(args, "--resume", out)...)
	want := fmt.Sprintf("mltop: --resume %s: %d rows recorded on metal (%d invalid) run again on cpu (%s)", out, n, n, here)
	if code != 0 || !strings.Contains(stderr, want) || strings.Contains(stderr, "resumed:") || strings.Contains(stdout, "from --resume") {
		t.Errorf("exit %d; want %q and nothing resumed:\n%s\n%s", code, want, stdout, stderr)
	}
	for _, r := range readCSV(t, out) {
		if r["backend"] != "cpu" {
			t.Errorf("a row of %s/%s is left: %v", r["backend"], r["device"], r)
		}
	}
}
