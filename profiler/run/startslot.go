package run

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// WorkerStartsEnv is how many workers may start at once on this host,
// across every mltop process of the user (the devices of --devices, the
// shards side by side): a positive whole number, default
// DefaultWorkerStarts.
//
// Why a limit: a GPU worker's start (cuInit, its primary context) takes
// about 0.3–0.45 s alone, but the driver serialises much of it: 4 workers
// starting together on a 4×H200 host were all ready only after 1.4–1.8 s,
// while started one after another each was ready 0.3 s after its turn
// came. With a limit the first devices measure while the others start.
const WorkerStartsEnv = "MLTOP_WORKER_STARTS"

// DefaultWorkerStarts is the limit without WorkerStartsEnv.
const DefaultWorkerStarts = 1

// startSlotWait bounds the wait for a slot: a start that holds one longer
// is slow for reasons of its own (a hung driver, a busy host), and the
// waiting worker starts beside it rather than wait on.
const startSlotWait = 3 * time.Second

// workerStarts reads WorkerStartsEnv; warning says what was wrong with a
// value that is not used.
func workerStarts(v string) (n int, warning string) {
	if v == "" {
		return DefaultWorkerStarts, ""
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return DefaultWorkerStarts, fmt.Sprintf("mltop: %s=%q is not a positive whole number of workers: %d start at once; set it to a count such as 2, or unset it", WorkerStartsEnv, v, DefaultWorkerStarts)
	}
	return n, ""
}

// startLimit is WorkerStartsEnv's value, read at each start (a bad one is
// said on stderr once per process).
func startLimit() int {
	n, warning := workerStarts(os.Getenv(WorkerStartsEnv))
	if warning != "" {
		startWarning.Do(func() { fmt.Fprintln(os.Stderr, warning) })
	}
	return n
}

var startWarning sync.Once
