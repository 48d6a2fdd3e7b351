package run_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// Close stops a worker at once, even one that would not end at its
// stdin's end (a GPU worker releasing its context, or a hung one): after
// Close it is gone or a zombie, never still running for its 60 s.
func TestWorkerPoolCloseKillsTheWorker(t *testing.T) {
	hello := `{"type":"hello","device":{"backend":"cpu","name":"fake"}}`
	pool, err := run.NewWorkerPool([]string{"sh", "-c", "echo '" + hello + "'; exec sleep 60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pid := pool.PID()
	start := time.Now()
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	// Not a timing of mltop: a Close that waits for the worker to end on
	// its own (it never would) takes its 5 s fallback before it kills.
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("Close waited %v for a worker that does not end on its own", waited)
	}
	for range 50 { // the kernel may take a moment to finish the exit
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("worker %d still runs after Close", pid)
}
