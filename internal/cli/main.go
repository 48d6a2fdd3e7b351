// Package cli is mltop's command line: one table of commands (commands.go),
// one file per command, and Main, which main.go hands over to.
package cli

import (
	"errors"
	"fmt"
	"io"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/profiler"
)

// Exit codes (README: "Exit codes").
const (
	exitOK       = 0
	exitFailed   = 1
	exitBadInput = 2
)

// Main runs mltop with args (without the program name) and returns the
// exit code: main.go and the tests call it.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signalContext()
	defer stop()
	defer catchBrokenPipe()()
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if c, rest := hoistCommand(args); c != "" {
		cmd, args = c, rest // mltop --backend cpu list
	}
	c, ok := lookupCommand(cmd)
	if !ok {
		hint := ""
		if near := nearestCommand(cmd); near != "" {
			hint = fmt.Sprintf("did you mean %s? ", near)
		}
		return report(badInput("unknown command %q: %suse %s, or no command for the interactive session (mltop --help)", cmd, hint, subcommandList(", ")), stderr)
	}
	s := &session{stdout: stdout, stderr: stderr, kernels: &manifestList{}}
	return report(c.call(ctx, s, args), stderr)
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func badInput(format string, a ...any) error {
	return &exitError{code: exitBadInput, msg: fmt.Sprintf(format, a...)}
}

func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "mltop:", ee.msg)
		}
		return ee.code
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	fmt.Fprintln(stderr, "mltop:", err)
	if profiler.IsInputError(err) {
		return exitBadInput
	}
	return exitFailed
}
