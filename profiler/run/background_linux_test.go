package run

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// threadNice is the calling thread's nice value.
func threadNice(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// Background host work (inputs made ahead, compiles ahead) runs at
// backgroundNice on threads of its own; the device thread keeps its
// priority.
func TestBackgroundWorkRunsNicerThanTheDeviceThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNice(t)
	want := max(base, backgroundNice)
	for _, background := range []bool{true, false} {
		var mu sync.Mutex
		seen := map[int]bool{}
		parallelChunks(64, 1, 8, background, func(lo, hi int) {
			n := threadNice(t)
			mu.Lock()
			seen[n] = true
			mu.Unlock()
		})
		expect := base
		if background {
			expect = want
		}
		if len(seen) != 1 || !seen[expect] {
			t.Errorf("parallelChunks(background %v) ran at nice %v, want only %d", background, seen, expect)
		}
	}
	var pool compilePool
	got := make(chan int)
	pool.submit(2, func() { got <- threadNice(t) })
	if n := <-got; n != want {
		t.Errorf("a compile ahead ran at nice %d, want %d", n, want)
	}
	pool.close()
	if n := threadNice(t); n != base {
		t.Errorf("the calling thread's nice changed from %d to %d", base, n)
	}
}
