package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
)

func helpCommand() command {
	c := newCommand("help", "print this help", "  mltop help                            print this help\n", (*noFlags).declare, runHelp)
	c.hidden = true
	// mltop help prints the help whatever follows it.
	c.parse = func(_ *flag.FlagSet, args []string) ([]string, error) { return args, nil }
	return c
}

// runHelp is `mltop help`: the help on stdout, exit 0.
func runHelp(_ context.Context, s *session, _ *noFlags, _ []string) error {
	usage(s.stdout)
	return nil
}

// usage is mltop --help: every command's lines from the table, then the
// flags of mltop itself and of run.
func usage(w io.Writer) {
	fmt.Fprint(w, `mltop — top for GPU compute kernels

Usage:
`)
	for _, c := range commandTable() {
		if !c.hidden {
			fmt.Fprint(w, c.help)
		}
	}
	fmt.Fprint(w, `
Flags go before or after the subcommand; each subcommand takes only the flags
that apply to it (docs/commands.md); a second ctrl-C kills at once.

Exit codes: 0 all specs ran and verified (or are unchecked: check: none); 1 a spec
failed (mismatch, compile_error, crashed, timeout, error, cancelled); 2 bad input
(flags, YAML, an impossible spec), or a sweep whose only failures are invalid rows.

Flags:
`)
	fs := flag.NewFlagSet("mltop", flag.ContinueOnError)
	var o options
	o.register(fs)
	fs.String("config", "", "run the sweep in YAML `file` headless")
	fs.String("set", "", "(run) knob, dim or flag values: `K=V,K=V` (repeatable)")
	fs.String("dtype", "", "(run) f32, f16 or bf16 (default: the family's first)")
	registerSweepFlags(fs, &options{})
	fs.SetOutput(w)
	fs.PrintDefaults()
}
