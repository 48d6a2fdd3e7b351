package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
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

// startLimit is WorkerStartsEnv's value, read (and a bad one said on
// stderr) once per process.
var startLimit = sync.OnceValue(func() int {
	n, warning := workerStarts(os.Getenv(WorkerStartsEnv))
	if warning != "" {
		fmt.Fprintln(os.Stderr, warning)
	}
	return n
})

// acquireStartSlot waits (up to wait) for one of n start slots of this
// user's mltop processes on this host and returns its release. The slots
// are flock(2) locks on files in the temp directory: a slot held by a
// process that died is free again, and two descriptors of one process
// exclude each other as two processes do. Where a slot cannot be had
// (no temp directory, a file system without flock, the wait ran out),
// the start goes ahead without one.
func acquireStartSlot(n int, wait time.Duration) (release func()) {
	return acquireStartSlotWith(syscall.Flock, n, wait)
}

// acquireStartSlotWith is acquireStartSlot with flock(2) given.
func acquireStartSlotWith(flock func(fd, how int) error, n int, wait time.Duration) (release func()) {
	noop := func() {}
	var files []*os.File
	for k := range n {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("mltop-%d-worker-start-%d.lock", os.Getuid(), k))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			for _, g := range files {
				g.Close()
			}
			return noop
		}
		files = append(files, f)
	}
	closeAll := func(except *os.File) {
		for _, g := range files {
			if g != except {
				g.Close()
			}
		}
	}
	deadline := time.Now().Add(wait)
	for {
		for _, f := range files {
			err := flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				closeAll(f)
				return func() {
					flock(int(f.Fd()), syscall.LOCK_UN)
					f.Close()
				}
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
				// Not a slot in use: this file system has no flock (a
				// Lustre or NFS temp directory): waiting would only
				// delay every start by the whole wait.
				closeAll(nil)
				return noop
			}
		}
		if time.Now().After(deadline) {
			closeAll(nil)
			return noop
		}
		time.Sleep(2 * time.Millisecond)
	}
}
