package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
)

// command is one row of the command table: everything mltop knows about a
// subcommand. Help, the did-you-mean of an unknown command or flag, and
// "--x is a flag of …" are all read from the table.
type command struct {
	name    string // "" is mltop itself: the interactive session and --config sweeps
	summary string // one line: what it does
	help    string // its lines in mltop --help (usage and what it does)
	hidden  bool   // left out of --help and of the commands messages list
	// flags declares the command's flags on fs and returns the values they
	// parse into, which run receives.
	flags func(fs *flag.FlagSet) any
	run   func(ctx context.Context, s *session, vals any, pos []string) error
	// parse reads args with fs; nil is parseInterleaved (flags before and
	// after the arguments).
	parse func(fs *flag.FlagSet, args []string) ([]string, error)
}

// newCommand makes a table row from a command's typed flag builder and run
// function: declare puts the flags into a fresh A, run gets it parsed.
func newCommand[A any](name, summary, help string, declare func(a *A, fs *flag.FlagSet), run func(ctx context.Context, s *session, a *A, pos []string) error) command {
	return command{
		name:    name,
		summary: summary,
		help:    help,
		flags: func(fs *flag.FlagSet) any {
			a := new(A)
			declare(a, fs)
			return a
		},
		run: func(ctx context.Context, s *session, vals any, pos []string) error {
			return run(ctx, s, vals.(*A), pos)
		},
	}
}

// commandTable is every command, in the order help and messages list them.
// Adding a command: a cmd_NAME.go file and one row here.
func commandTable() []command {
	return []command{
		newCommand("", sessionSummary, sessionHelp, (*sessionArgs).declare, runSession),
		newCommand("run", runSummary, runHelpText, (*specArgs).declare, runRun),
		newCommand("watch", watchSummary, watchHelp, (*watchArgs).declare, runWatch),
		newCommand("new", newSummary, newHelp, (*newArgs).declare, runNew),
		newCommand("check", checkSummary, checkHelp, (*checkArgs).declare, runCheck),
		newCommand("list", listSummary, listHelp, (*listArgs).declare, runList),
		newCommand("tune", tuneSummary, tuneHelp, (*tuneArgs).declare, runTune),
		newCommand("report", reportSummary, reportHelp, (*reportArgs).declare, runReport),
		newCommand("merge", mergeSummary, mergeHelp, (*mergeArgs).declare, runMerge),
		newCommand("compare", compareSummary, compareHelp, (*compareArgs).declare, runCompare),
		newCommand("calibrate", calibrateSummary, calibrateHelp, (*backendArgs).declare, runCalibrate),
		newCommand("selftest", selftestSummary, selftestHelp, (*backendArgs).declare, runSelftest),
		helpCommand(),
		workerCommand(),
	}
}

// lookupCommand is the row of name, false for an unknown command.
func lookupCommand(name string) (command, bool) {
	for _, c := range commandTable() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames are the commands messages name (mltop itself first as ""):
// every row that is not hidden. Set in init: the table's run functions
// read it, so a variable initialiser would be a cycle.
var commandNames []string

func init() {
	for _, c := range commandTable() {
		if !c.hidden {
			commandNames = append(commandNames, c.name)
		}
	}
}

// subcommandList is "run, watch, …, selftest" (last joined by and), for
// messages that list what mltop takes.
func subcommandList(last string) string {
	names := commandNames[1:]
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

func isCommand(name string) bool {
	_, ok := lookupCommand(name)
	return name != "" && ok
}

// flagsOf is the flag set of a command ("" for mltop itself), built from
// its row without running it; nil for an unknown command.
func flagsOf(name string) *flag.FlagSet {
	c, ok := lookupCommand(name)
	if !ok {
		return nil
	}
	fs := newFlagSet(commandLabel(name))
	c.flags(fs)
	return fs
}

// call parses args with the command's flags and runs it; -h prints the
// help on stderr.
func (c command) call(ctx context.Context, s *session, args []string) error {
	fs := newFlagSet(commandLabel(c.name))
	vals := c.flags(fs)
	parse := c.parse
	if parse == nil {
		parse = parseInterleaved
	}
	pos, err := parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		usage(s.stderr)
		return errHelp
	}
	if err != nil {
		return err
	}
	s.given = setFlags(fs)
	return c.run(ctx, s, vals, pos)
}

// newFlagSet is a flag set that prints nothing: errors become one line
// (flagError), and -h prints the help (command.call).
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterleaved parses flags that may come before and after positional
// arguments ("run attn_fwd --set BQ=32" and "run --set BQ=32 attn_fwd").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, flagError(strings.TrimSpace(strings.TrimPrefix(fs.Name(), "mltop")), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// noFlags is the flag builder of a command without flags of its own that
// still takes --no-color and --quiet (registerNoopFlags).
type noFlags struct{}

func (*noFlags) declare(fs *flag.FlagSet) { registerNoopFlags(fs) }
