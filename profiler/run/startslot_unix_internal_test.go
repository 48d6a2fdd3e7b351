//go:build unix

package run

import (
	"syscall"
	"testing"
	"time"
)

// A start slot excludes a second start (in this process as in another)
// until it is released; with two slots, two starts go at once; a wait that
// runs out starts anyway.
func TestStartSlotsTakeTurns(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	first := acquireStartSlot(nil, 1, time.Second)
	got := make(chan struct{})
	go func() {
		release := acquireStartSlot(nil, 1, 10*time.Second)
		close(got)
		release()
	}()
	select {
	case <-got:
		t.Fatal("a second start took the only slot while the first held it")
	case <-time.After(100 * time.Millisecond):
	}
	first()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second start did not get the slot the first released")
	}

	a := acquireStartSlot(nil, 2, time.Second)
	done := make(chan struct{})
	go func() { acquireStartSlot(nil, 2, 10*time.Second)(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("with two slots, a second start waited for the first")
	}
	a()

	held := acquireStartSlot(nil, 1, time.Second)
	defer held()
	start := time.Now()
	acquireStartSlot(nil, 1, 50*time.Millisecond)()
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("went ahead after %v, before its wait ran out", waited)
	}
}

// A temp directory whose file system has no flock (Lustre mounted
// without it: ENOSYS; NFS without a lock manager: ENOLCK) has no slots:
// the start goes ahead at once, instead of taking each error for a slot
// in use and waiting the whole wait on every worker start.
func TestStartSlotWithoutFlockGoesAhead(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, errno := range []syscall.Errno{syscall.ENOSYS, syscall.ENOLCK, syscall.EINVAL} {
		calls := 0
		acquireStartSlotWith(func(int, int) error { calls++; return errno }, nil, 2, time.Second)()
		if calls != 1 {
			t.Errorf("%v: flock tried %d times, want once (the error is not a slot in use)", errno, calls)
		}
	}
	// a slot in use is still waited for
	calls := 0
	acquireStartSlotWith(func(int, int) error { calls++; return syscall.EWOULDBLOCK }, nil, 1, 20*time.Millisecond)()
	if calls < 2 {
		t.Errorf("a busy slot was tried %d times, want it tried again until the wait ran out", calls)
	}
}

// A stop (ctrl-C) ends the wait for a slot at once: a busy slot is tried
// once, not until the wait runs out.
func TestStartSlotWaitEndsAtAStop(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	stop := make(chan struct{})
	close(stop)
	calls := 0
	acquireStartSlotWith(func(int, int) error { calls++; return syscall.EWOULDBLOCK }, stop, 1, time.Hour)()
	if calls != 1 {
		t.Errorf("a busy slot was tried %d times after the stop, want once", calls)
	}
}
