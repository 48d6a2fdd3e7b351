package cli

import (
	"context"
	"errors"
	"os"

	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	"github.com/mltop/mltop/profiler/sink"
)

const (
	reportSummary = "attention-backward tables from a sweep's CSV"
	reportHelp    = `  mltop report FILE.csv                 attention-backward tables (fused/unfused speed ratio,
                                        peak device memory) from a sweep's CSV
`
)

// runReport is `mltop report FILE.csv`: the attention-backward tables of
// seed 001 (fused/unfused speed ratio, peak memory) from a sweep's CSV.
func runReport(_ context.Context, s *session, _ *noFlags, pos []string) error {
	stdout := s.stdout
	if len(pos) != 1 {
		return badInput("report takes one CSV file written by a sweep, e.g. mltop report bwd.csv")
	}
	if _, err := os.Stat(pos[0]); errors.Is(err, os.ErrNotExist) {
		return badInput("%s does not exist: run a sweep with --csv %s first (e.g. configs/attention_bwd.yaml)", pos[0], pos[0])
	}
	rows, err := sink.ReadCSV(pos[0]) // a file that is not an mltop CSV is refused as such
	if err != nil {
		return badInput("%v", err)
	}
	rep, err := attnbwd.Report(rows)
	if err != nil {
		return badInput("%v", err)
	}
	return sink.WriteReport(stdout, rep)
}
