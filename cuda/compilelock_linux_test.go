package cuda

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Two compiles of one program, as two workers of a sweep would ask for
// it: the second waits for the first's release, then finds no lock file
// left behind.
func TestLockCompileMakesTheSecondWait(t *testing.T) {
	c := newCubinCache(t.TempDir())
	release := c.lockCompile("k1")
	got, released := make(chan struct{}), make(chan struct{})
	go func() {
		r := c.lockCompile("k1")
		close(got)
		r()
		close(released)
	}()
	select {
	case <-got:
		t.Fatal("a second lockCompile of the same key did not wait for the first's release")
	case <-time.After(100 * time.Millisecond):
	}
	other := c.lockCompile("k2") // another program is not held up
	other()
	release()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second lockCompile did not get the lock after the release")
	}
	<-released // the lock file goes with the second's release
	if m, _ := filepath.Glob(filepath.Join(c.dir, "*.lock")); len(m) != 0 {
		t.Errorf("lock files left in the cache directory: %v", m)
	}
}

func TestLockCompileWithoutADirectory(t *testing.T) {
	newCubinCache("").lockCompile("k")() // no disk cache: nothing to lock, no error
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { newCubinCache(filepath.Join(file, "cuda")).lockCompile("k")(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("lockCompile under a path that cannot be a directory did not go ahead")
	}
}

// lockFileDescriptors counts this process's descriptors open on path.
func lockFileDescriptors(t *testing.T, path string) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}

// A process that waited on the lock file gets it after the holder
// removed it: it must lock the path's new file, or a third process that
// opens the path then (a new file) compiles beside it.
func TestLockCompileAfterTheFileWasRemovedStillExcludes(t *testing.T) {
	c := newCubinCache(t.TempDir())
	path := filepath.Join(c.dir, "k.lock")
	first := c.lockCompile("k")
	secondHolds, secondDone := make(chan struct{}), make(chan struct{})
	released := make(chan struct{}, 2) // each later holder's release has returned
	go func() {
		r := c.lockCompile("k")
		close(secondHolds)
		<-secondDone
		r()
		released <- struct{}{}
	}()
	for lockFileDescriptors(t, path) < 2 { // the second has the file open and waits on it
		time.Sleep(time.Millisecond)
	}
	first()
	<-secondHolds
	third := make(chan struct{})
	go func() {
		r := c.lockCompile("k")
		close(third)
		r()
		released <- struct{}{}
	}()
	select {
	case <-third:
		t.Fatal("a third lockCompile got the lock while the second held it")
	case <-time.After(100 * time.Millisecond):
	}
	close(secondDone)
	select {
	case <-third:
	case <-time.After(5 * time.Second):
		t.Fatal("the third lockCompile did not get the lock after the second's release")
	}
	<-released // the lock files are gone once both releases returned, not when the third got the lock
	<-released
	if m, _ := filepath.Glob(filepath.Join(c.dir, "*.lock")); len(m) != 0 {
		t.Errorf("lock files left in the cache directory: %v", m)
	}
}
