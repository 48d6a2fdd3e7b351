package run

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Workers that need the same file at once: one makes it, the others wait
// and read it.
func TestHostCacheOneMakerAtATime(t *testing.T) {
	dir := t.TempDir()
	var calls atomic.Int32
	var wg sync.WaitGroup
	caches := make([]*hostCache, 8)
	got := make([]string, 8)
	for i := range caches {
		caches[i] = &hostCache{dir: dir}
		wg.Go(func() {
			err := caches[i].once("ref", "shape", func(b []byte) error { got[i] = string(b); return nil }, func() ([]byte, error) {
				calls.Add(1)
				time.Sleep(20 * time.Millisecond) // the others find the lock
				got[i] = "value"
				return []byte("value"), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("made %d times, want once", calls.Load())
	}
	made, loaded := int64(0), int64(0)
	for i, c := range caches {
		made += c.made.Load()
		loaded += c.loaded.Load()
		if got[i] != "value" {
			t.Errorf("worker %d got %q", i, got[i])
		}
	}
	if made != 1 || loaded != 7 {
		t.Errorf("made %d, read %d; want 1 and 7", made, loaded)
	}
}

// The lock of a worker that died while making a file does not hold the
// others: they make it.
func TestHostCacheStaleLock(t *testing.T) {
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	c := &hostCache{dir: t.TempDir()}
	os.WriteFile(c.path("in", "k")+".lock", []byte(fmt.Sprint(dead.ProcessState.Pid())), 0o600)
	done := make(chan error)
	go func() {
		done <- c.once("in", "k", func([]byte) error { return nil }, func() ([]byte, error) { return []byte("x"), nil })
	}()
	select {
	case err := <-done:
		if err != nil || c.made.Load() != 1 {
			t.Errorf("err %v, made %d", err, c.made.Load())
		}
	case <-time.After(time.Minute):
		t.Fatal("waited for the lock of a dead worker")
	}
}

// parallel never runs more goroutines than asked (a worker of N takes
// cores/N).
func TestParallelThreadCap(t *testing.T) {
	var cur, peak atomic.Int32
	parallel(64*fillChunk, 2, false, func(lo, hi int) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		cur.Add(-1)
	})
	if peak.Load() > 2 {
		t.Errorf("%d goroutines at once, want at most 2", peak.Load())
	}
}

// The input cache keeps the last keptInputSets shapes it used besides the
// current one, however small they are, and never drops a set made ahead
// and not used yet for that count; the byte budget still bounds them all.
func TestInputCacheKeepsTheLastFewShapes(t *testing.T) {
	var c inputCache
	ahead := &inputSet{key: "ahead", bytes: 10, ahead: 10}
	c.sets = append(c.sets, ahead)
	for i := range 100 {
		c.use(fmt.Sprint("shape", i), 1<<30).bytes = 10
	}
	if len(c.sets) != keptInputSets+2 || c.find("ahead") == nil || c.find("shape99") == nil || c.find(fmt.Sprint("shape", 99-keptInputSets)) == nil {
		var keys []string
		for _, s := range c.sets {
			keys = append(keys, s.key)
		}
		t.Errorf("kept %v, want ahead and the last %d shapes", keys, keptInputSets+1)
	}
	c.use("big", 25).bytes = 10 // the budget drops all but the newest two others
	if len(c.sets) != 3 || c.find("big") == nil || c.find("shape99") == nil {
		t.Errorf("over the byte budget: %d sets kept", len(c.sets))
	}
}
