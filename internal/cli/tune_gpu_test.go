package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/profiler/sink"
)

// TestTuneOnCUDA searches rmsnorm_bwd on a GPU with every strategy: each
// finds a winner, compares it with the runner-up, and writes one marked row
// per measurement; the header compiles elsewhere (profiler/tune).
func TestTuneOnCUDA(t *testing.T) {
	if ok, why := cuda.Available(); !ok {
		t.Skip("no CUDA here: " + why)
	}
	for _, strategy := range []string{"tpe", "evolution", "halving", "random"} {
		csv := filepath.Join(t.TempDir(), strategy+".csv")
		code, stdout, stderr := runMain(t, "tune", "rmsnorm_bwd", "--backend", "cuda", "--dims", "rows=4096,D=4096", "--dtype", "bf16",
			"--strategy", strategy, "--budget", "24", "--time-limit", "0.5", "--csv", csv, "--quiet")
		if code != 0 || !strings.Contains(stdout, "#1 ") || !(strings.Contains(stdout, "tied within noise") || strings.Contains(stdout, "do not overlap")) {
			t.Errorf("%s: exit %d\n%s\n%s", strategy, code, stdout, stderr)
			continue
		}
		rows, err := sink.ReadCSV(csv)
		if err != nil || len(rows) < 24 {
			t.Errorf("%s: %d rows, %v", strategy, len(rows), err)
		}
	}
}
