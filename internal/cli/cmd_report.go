package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/tune"
)

const (
	reportSummary = "attention-backward tables from a sweep's CSV, or a tuning table"
	reportHelp    = `  mltop report FILE.csv [--kernel PATH] attention-backward tables (fused/unfused speed ratio,
                                        peak device memory) from a sweep's CSV; a tuning table
                                        (mltop tune --table FILE.csv) as a table (--kernel: the
                                        manifest of a user kernel's table)
`
)

type reportArgs struct{ kernels kernelPaths }

func (a *reportArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.Var(&a.kernels, "kernel", "")
}

// runReport is `mltop report FILE.csv`: the attention-backward tables of
// seed 001 (fused/unfused speed ratio, peak memory) from a sweep's CSV.
func runReport(_ context.Context, s *session, a *reportArgs, pos []string) error {
	stdout := s.stdout
	if len(pos) != 1 {
		return badInput("report takes one CSV file written by a sweep, e.g. mltop report bwd.csv")
	}
	if err := s.loadUserKernels(a.kernels); err != nil {
		return err
	}
	if _, err := os.Stat(pos[0]); errors.Is(err, os.ErrNotExist) {
		return badInput("%s does not exist: run a sweep with --csv %s first (e.g. configs/attention_bwd.yaml)", pos[0], pos[0])
	}
	if tune.IsTableFile(pos[0]) { // mltop tune --table FILE.csv
		t, err := tune.ReadTableCSV(pos[0])
		if err != nil {
			return badInput("%v", err)
		}
		fmt.Fprintf(stdout, "tuning table of %s (%s, on %s):\n", t.Kernel, t.Objective, t.Device)
		printTable(stdout, t)
		return nil
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
