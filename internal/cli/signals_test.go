package cli

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestRepeatedSignalIsTheFirst: a second signal within repeatWindow of
// the first (timeout(1) signals the process, then its group) is ignored;
// a later one quits at once. The clock is fake: each signal arrives at its
// offset from the first.
func TestRepeatedSignalIsTheFirst(t *testing.T) {
	const never = -1
	intr, term := os.Signal(os.Interrupt), os.Signal(syscall.SIGTERM)
	cases := []struct {
		name   string
		sigs   []os.Signal
		at     []time.Duration // after the first signal
		quitAt int             // which signal quits
		cause  error
	}{
		{"timeout -s INT: the pid, then the group", []os.Signal{intr, intr}, []time.Duration{0, 20 * time.Microsecond}, never, nil},
		{"timeout: SIGTERM twice", []os.Signal{term, term}, []time.Duration{0, 5 * time.Microsecond}, never, errTerminated},
		{"just inside the window", []os.Signal{intr, intr}, []time.Duration{0, repeatWindow - time.Millisecond}, never, nil},
		{"a person's second ctrl-C", []os.Signal{intr, intr}, []time.Duration{0, 600 * time.Millisecond}, 1, nil},
		{"at the window's end", []os.Signal{intr, intr}, []time.Duration{0, repeatWindow}, 1, nil},
		{"a repeat, then a second ctrl-C", []os.Signal{intr, intr, intr}, []time.Duration{0, 10 * time.Microsecond, time.Second}, 2, nil},
		{"the window counts from the first", []os.Signal{intr, intr, intr}, []time.Duration{0, 200 * time.Millisecond, 300 * time.Millisecond}, 2, nil},
		{"SIGTERM, then a later ctrl-C", []os.Signal{term, intr}, []time.Duration{0, time.Second}, 1, errTerminated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sigs := make(chan os.Signal, len(c.sigs))
			for _, s := range c.sigs {
				sigs <- s
			}
			done := make(chan struct{})
			calls := 0
			first := time.Unix(1000, 0)
			clock := func() time.Time {
				calls++
				if calls == len(c.sigs) {
					close(done) // the loop ends after acting on the last signal
				}
				return first.Add(c.at[calls-1])
			}
			var causes []error
			cancel := func(err error) { causes = append(causes, err) }
			quitAt, quitBy := never, os.Signal(nil)
			quit := func(sig os.Signal) { quitAt, quitBy = calls-1, sig }

			followSignals(sigs, done, &signalWatch{now: clock}, cancel, quit)

			if len(causes) != 1 || !errors.Is(causes[0], c.cause) {
				t.Errorf("cancelled with %v, want once with %v", causes, c.cause)
			}
			if quitAt != c.quitAt {
				t.Errorf("quit at signal %d (-1: never), want %d", quitAt, c.quitAt)
			}
			if quitAt != never && quitBy != c.sigs[quitAt] {
				t.Errorf("quit by %v, want %v", quitBy, c.sigs[quitAt])
			}
		})
	}
}
