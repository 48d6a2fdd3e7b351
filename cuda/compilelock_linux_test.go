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
	got := make(chan struct{})
	go func() {
		r := c.lockCompile("k1")
		close(got)
		r()
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
