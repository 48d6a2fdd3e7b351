package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
)

const (
	mergeSummary = "join the CSVs of a sweep's shards"
	mergeHelp    = `  mltop merge A.csv B.csv … -o ALL.csv [--config sweep.yaml]
                                        join the CSVs of a sweep's shards (--shard): checks the
                                        columns, drops duplicate specs, lists specs with no row
`
)

type mergeArgs struct {
	out, config string
	kernels     kernelPaths
}

func (a *mergeArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.StringVar(&a.out, "o", "", "")
	fs.StringVar(&a.config, "config", "", "")
	fs.Var(&a.kernels, "kernel", "")
}

// runMerge is `mltop merge a.csv b.csv … -o all.csv [--config sweep.yaml]`:
// the shards of one sweep into one CSV. Exit 2 on bad input (unreadable
// files, columns that differ), 1 when --config is given and specs of the
// sweep have no row, else 0.
func runMerge(_ context.Context, s *session, a *mergeArgs, inputs []string) error {
	stderr, out, config := s.stderr, &a.out, &a.config
	if *out == "" {
		return badInput("merge needs -o FILE for the merged CSV: mltop merge a.csv b.csv -o all.csv")
	}
	if len(inputs) == 0 {
		return badInput("merge needs the CSVs to merge: mltop merge a.csv b.csv -o all.csv")
	}
	for _, in := range inputs {
		if filepath.Clean(in) == filepath.Clean(*out) {
			return badInput("-o %s is also an input: merge into a new file", *out)
		}
	}
	var want []profiler.Spec
	if err := s.loadUserKernels(a.kernels); err != nil {
		return err
	}
	if *config != "" {
		// The loader of runSweep: kernel: ./path entries resolve against
		// the sweep file, as when the shards ran.
		sw, err := sweep.LoadWith(*config, profiler.DefaultOptions(), s.sweepOptions())
		if err != nil {
			return err
		}
		for _, j := range sw.Jobs {
			want = append(want, j.Spec)
		}
	}
	m, err := sink.MergeCSV(inputs)
	if err != nil {
		return err
	}
	if err := sink.WriteMerged(*out, m); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mltop: %s from %s → %s in %s", profiler.Plural(m.Rows, "row", "rows"), profiler.Plural(len(inputs), "file", "files"), profiler.Plural(len(m.Results), "spec", "specs"), *out)
	if m.Duplicates > 0 {
		fmt.Fprintf(stderr, " (%d duplicate rows dropped: of each spec's rows the first ok one is kept, else the first, in the order the files were given)", m.Duplicates)
	}
	fmt.Fprintln(stderr)
	if *config == "" {
		return nil
	}
	missing, extra := m.Missing(want)
	if extra > 0 {
		fmt.Fprintf(stderr, "mltop: %d specs in the CSVs are not in %s (another sweep's rows?)\n", extra, *config)
	}
	if len(missing) > 0 {
		return &exitError{code: exitFailed, msg: fmt.Sprintf("%d of the %d specs of %s have no row:\n%srun the shards that wrote no CSV again (with --resume FILE to keep what they wrote), then merge again", len(missing), len(want), *config, sink.SpecList(missing, 5))}
	}
	fmt.Fprintf(stderr, "mltop: every spec of %s has a row\n", *config)
	return nil
}
