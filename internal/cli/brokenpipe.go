package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// errStdoutClosed is the cause of a sweep's cancellation when stdout was
// closed and it was the sweep's only output (no --csv): cancelled rows
// and the closing message say it instead of "cancelled by user".
var errStdoutClosed = errors.New("stdout was closed (broken pipe)")

// catchBrokenPipe makes a write to a closed stdout or stderr fail with
// EPIPE instead of ending mltop by SIGPIPE: Go kills a program that writes
// to a broken fd 1 or 2 unless it is notified of SIGPIPE (os/signal). A
// sweep piped into `head` then decides itself what a closed stdout means
// (stdoutGuard); other commands stop printing and end as usual. stop
// gives SIGPIPE its default action back.
func catchBrokenPipe() (stop func()) {
	c := make(chan os.Signal, 1) // never read: a full channel drops the signal
	signal.Notify(c, syscall.SIGPIPE)
	return func() { signal.Stop(c) }
}

// stdoutGuard stands between a sweep's stdout sink (the table, --json or
// --bench lines) and stdout. When what reads stdout goes away (`| head
// -2`), the write fails with EPIPE: the guard calls gone once and from
// then on drops what is written, reporting success, so that the sink is
// not taken for broken and the sweep is not stopped for it (gone decides
// that). Safe for concurrent use.
type stdoutGuard struct {
	w    io.Writer
	gone func()

	mu     sync.Mutex
	closed bool
}

func (g *stdoutGuard) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	n, err := g.w.Write(p)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		g.closed = true
		g.gone()
		return len(p), nil
	}
	return n, err
}

// stdoutGone is what a sweep does when its stdout is closed: with --csv
// the table stops and the sweep goes on into the CSV; without, the table
// was its only output, so it stops as ctrl-C stops it (cancel), with
// errStdoutClosed as the cause. What it says then waits for the end
// (stdoutClosedEnd): a close during the last row's write stops nothing.
func stdoutGone(stderr io.Writer, csv string, cancel func(error)) func() {
	return func() {
		if csv != "" {
			fmt.Fprintf(stderr, "mltop: %v: the table stops here; the sweep goes on into %s\n", errStdoutClosed, csv)
			return
		}
		cancel(errStdoutClosed)
	}
}

// stdoutClosedEnd is how a sweep without --csv whose stdout was closed
// ends, with left specs not measured and err what the sweep returned:
// when some are left, stopped as by ctrl-C (exit 1); when none is (the
// close came with the last row), finished with its table cut short: exit
// 1 still where the cancel reached the sweep (err), else nil, and the
// results' exit code stands.
func stdoutClosedEnd(stderr io.Writer, left, total int, err error) error {
	if left == 0 {
		msg := fmt.Sprintf("%v after every spec ran: the sweep finished (%d of %d specs measured), but its table on stdout is cut short: add --csv FILE to keep every row whatever reads stdout", errStdoutClosed, total, total)
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitFailed, msg: msg}
		}
		fmt.Fprintln(stderr, "mltop:", msg)
		return nil
	}
	fmt.Fprintf(stderr, "mltop: %v: the sweep stopped, as with ctrl-C: without --csv the table was its only output\n", errStdoutClosed)
	return &exitError{code: exitFailed, msg: fmt.Sprintf("interrupted: %v and it was the sweep's only output: %d of %d specs not measured; nothing else kept: add --csv FILE to keep every row whatever reads stdout (and --resume FILE to go on after an interruption)", errStdoutClosed, left, total)}
}
