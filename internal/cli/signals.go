package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// errTerminated is the cause of a SIGTERM's cancellation: results cut
// short by it say so (run.CancelReason), not "cancelled by user".
var errTerminated = errors.New("terminated (SIGTERM)")

// signalContext is cancelled by the first ctrl-C or SIGTERM (commands stop
// at the next check and report what they have), with errTerminated as the
// cause for SIGTERM. After it the signals kill as usual, so a second
// ctrl-C ends a run stuck where nothing checks (a GPU launch). stop
// releases the signals.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs)
			cancel(causeOf(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// causeOf is the cancellation cause of a signal: nil (plain cancellation,
// "cancelled by user") for ctrl-C.
func causeOf(sig os.Signal) error {
	if sig == syscall.SIGTERM {
		return errTerminated
	}
	return nil
}
