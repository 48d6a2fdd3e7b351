package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// compileLockWait bounds how long a process waits for another to finish
// compiling a program before it compiles the program itself.
const compileLockWait = 5 * time.Minute

// lockCompile takes, across processes, the right to compile the program
// key into the disk cache, and returns its release. The workers of a
// --devices sweep and shards side by side share the cache directory; on a
// cold cache they need the same programs at about the same time (the
// shapes differ, the kernels do not), and without the lock each would run
// NVRTC on them: N times the compile work of one GPU. The caller looks in
// the cache again once it holds the lock.
//
// The lock is flock(2) on KEY.lock, so a process that dies holding it
// frees it. Where there is no directory, or flock is not supported
// (ENOSYS, ENOLCK on some network filesystems), or the wait runs out,
// there is no lock and the caller compiles: a duplicate compile costs
// time, never a wrong cubin (each write is a rename).
func (c *cubinCache) lockCompile(key string) (release func()) {
	noLock := func() {}
	if c.dir == "" || os.MkdirAll(c.dir, 0o755) != nil {
		return noLock
	}
	path := filepath.Join(c.dir, key+".lock")
	deadline := time.Now().Add(compileLockWait)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return noLock
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err != nil && (errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR)) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			break
		}
		if err != nil {
			f.Close()
			return noLock
		}
		if !isFileAt(f, path) {
			// The holder removed the file as it let go: this lock is on
			// a name no one else opens. Lock the file at path now.
			f.Close()
			continue
		}
		return func() {
			// Removed before it is unlocked, so that the directory keeps
			// no lock file; a process that waited on this file sees,
			// once it has the lock, that the path is gone, and locks the
			// path's new file instead.
			os.Remove(path)
			f.Close()
		}
	}
}

// isFileAt says whether f is the file path names now.
func isFileAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(held, now)
}
