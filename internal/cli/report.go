package cli

import (
	"errors"
	"io"
	"os"

	attnbwd "github.com/mltop/mltop/kernels/attn_bwd"
)

// cmdReport is `mltop report FILE.csv`: the attention-backward tables of
// seed 001 (fused/unfused speed ratio, peak memory) from a sweep's CSV.
func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mltop report", stderr, usage)
	registerNoopFlags(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("report takes one CSV file written by a sweep, e.g. mltop report bwd.csv")
	}
	if _, err := os.Stat(pos[0]); errors.Is(err, os.ErrNotExist) {
		return badInput("%s does not exist: run a sweep with --csv %s first (e.g. configs/attention_bwd.yaml)", pos[0], pos[0])
	}
	if err := attnbwd.ReportFile(stdout, pos[0]); err != nil {
		return badInput("%v", err)
	}
	return nil
}
