//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// acquireStartSlot waits (up to wait) for one of n start slots of this
// user's mltop processes on this host and returns its release. The slots
// are flock(2) locks on files in the temp directory: a slot held by a
// process that died is free again, and two descriptors of one process
// exclude each other as two processes do. Where a slot cannot be had
// (no temp directory, a file system without flock, the wait ran out),
// the start goes ahead without one. A stop (closed: ctrl-C) ends the wait
// at once, without a slot; the caller then starts nothing.
func acquireStartSlot(stop <-chan struct{}, n int, wait time.Duration) (release func()) {
	return acquireStartSlotWith(syscall.Flock, stop, n, wait)
}

// acquireStartSlotWith is acquireStartSlot with flock(2) given.
func acquireStartSlotWith(flock func(fd, how int) error, stop <-chan struct{}, n int, wait time.Duration) (release func()) {
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
		select {
		case <-stop:
			closeAll(nil)
			return noop
		case <-time.After(2 * time.Millisecond):
		}
	}
}
