package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// errTerminated is the cause of a SIGTERM's cancellation: results cut
// short by it say so (run.CancelReason), not "cancelled by user".
var errTerminated = errors.New("terminated (SIGTERM)")

// repeatWindow is how soon after the first signal a second one is taken
// for the same one delivered twice, not for a person's second ctrl-C:
// timeout(1) and other tools signal the process and then its process
// group, microseconds apart; nobody presses ctrl-C twice that fast.
const repeatWindow = 250 * time.Millisecond

// signalContext is cancelled by the first ctrl-C or SIGTERM (commands stop
// at the next check and report what they have), with errTerminated as the
// cause for SIGTERM. A second signal within repeatWindow of the first is
// ignored; a later one kills mltop at once, as the signal does uncaught,
// so that a second ctrl-C ends a run stuck where nothing checks (a GPU
// launch). stop releases the signals.
func signalContext() (context.Context, func()) {
	return watchSignals(time.Now, dieBy)
}

// watchSignals is signalContext with its clock and its way to quit.
func watchSignals(now func() time.Time, quit func(os.Signal)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go followSignals(sigs, done, &signalWatch{now: now}, cancel, func(sig os.Signal) {
		signal.Stop(sigs)
		quit(sig)
	})
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// followSignals acts on each signal from sigs until done is closed or it
// has quit.
func followSignals(sigs <-chan os.Signal, done <-chan struct{}, w *signalWatch, cancel context.CancelCauseFunc, quit func(os.Signal)) {
	for {
		select {
		case sig := <-sigs:
			switch w.next() {
			case cancelRun:
				cancel(causeOf(sig))
			case quitNow:
				quit(sig)
				return
			}
		case <-done:
			return
		}
	}
}

// signalAction is what a signal does.
type signalAction int

const (
	cancelRun    signalAction = iota // the first: stop at the next check
	ignoreRepeat                     // the first again, within repeatWindow
	quitNow                          // a second one: quit at once
)

// signalWatch tells the first signal, its repeats and a second one apart
// by when each arrives.
type signalWatch struct {
	now   func() time.Time
	seen  bool
	first time.Time
}

func (w *signalWatch) next() signalAction {
	t := w.now()
	switch {
	case !w.seen:
		w.seen, w.first = true, t
		return cancelRun
	case t.Sub(w.first) < repeatWindow:
		return ignoreRepeat
	default:
		return quitNow
	}
}

// dieBy ends mltop by sig, as sig does to a process that does not catch
// it (the shell says 130 for ctrl-C). Where a process cannot signal
// itself, or sig was ignored when mltop started (a background job), it
// exits with the status the shell would show.
func dieBy(sig os.Signal) {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
		time.Sleep(time.Second) // the default action ends the process first
	}
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	os.Exit(code)
}

// causeOf is the cancellation cause of a signal: nil (plain cancellation,
// "cancelled by user") for ctrl-C.
func causeOf(sig os.Signal) error {
	if sig == syscall.SIGTERM {
		return errTerminated
	}
	return nil
}
