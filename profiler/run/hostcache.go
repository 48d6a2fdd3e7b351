package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mltop/mltop/profiler"
)

// The workers of one multi-device sweep share the host work that does not
// depend on their GPU and costs more to make than to read: the float64
// references of each shape. (Not the inputs: generating them on a
// worker's cores is as fast as reading and decoding them,
// and writing every shape's inputs to a file cost the sweep more than it
// saved; devices keep to their shapes instead, see devSweep.tryTake.) The
// parent makes a temporary directory and names it to every worker in
// SharedCacheEnv; the first worker to need a shape's reference makes it
// and writes it there (atomically: a temporary file renamed), the others
// read it. While one worker makes a file it
// holds NAME.lock; a worker that needs the same file waits for it instead
// of making it again. The parent removes the directory after the sweep.
const (
	SharedCacheEnv = "MLTOP_SHARED_CACHE"
	// FillThreadsEnv caps the goroutines a worker generates and encodes
	// inputs on: with N workers on one host the parent passes
	// cores − (N−1), or its own MLTOP_FILL_THREADS when set.
	FillThreadsEnv = "MLTOP_FILL_THREADS"
	// HostWorkersEnv is how many workers share the host: each keeps its
	// share of the memory for inputs made ahead (see inputBudget).
	HostWorkersEnv = "MLTOP_HOST_WORKERS"
)

// maxSharedFile bounds one shared file: a larger reference is made by
// each worker (a temporary directory may be in memory).
const maxSharedFile = 1 << 30

// sharedWaitLimit bounds how long a worker waits for another to write a
// file before it makes the file itself.
const sharedWaitLimit = 10 * time.Minute

// hostCache is the shared directory, or nothing when dir is "".
type hostCache struct {
	dir string
	// made and loaded count the files made here and read from another
	// worker (tests, and the phases a sweep reports).
	made, loaded atomic.Int64
}

func (c *hostCache) enabled() bool { return c != nil && c.dir != "" }

// path is the file of key in the directory: a hash, as keys hold any
// character.
func (c *hostCache) path(kind, key string) string {
	h := sha256.Sum256([]byte(kind + "\x00" + key))
	return filepath.Join(c.dir, kind+"-"+hex.EncodeToString(h[:12]))
}

// once returns the bytes stored under kind and key: read from the shared
// file when a worker made it, else made by mk and written (at most
// maxSharedFile). One worker makes a file at a time; the others wait for
// it. A file that dec refuses (torn, another format) is made again.
func (c *hostCache) once(kind, key string, dec func([]byte) error, mk func() ([]byte, error)) error {
	path := c.path(kind, key)
	deadline := time.Now().Add(sharedWaitLimit)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if dec(b) == nil {
				c.loaded.Add(1)
				return nil
			}
			os.Remove(path)
		}
		lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprint(lock, os.Getpid())
			lock.Close()
			defer os.Remove(path + ".lock")
			// Another worker may have written it since the read above.
			if b, err := os.ReadFile(path); err == nil && dec(b) == nil {
				c.loaded.Add(1)
				return nil
			}
			return c.make(path, mk)
		}
		if !errors.Is(err, os.ErrExist) || time.Now().After(deadline) {
			// No lock to be had (the directory is gone, or a worker has
			// held it too long): make it here, and share nothing.
			_, err := mk()
			return err
		}
		if !lockHolderAlive(path + ".lock") {
			os.Remove(path + ".lock") // its worker died while making it
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// make runs mk and writes its bytes to path through a temporary file.
func (c *hostCache) make(path string, mk func() ([]byte, error)) error {
	b, err := mk()
	if err != nil {
		return err
	}
	c.made.Add(1)
	if b == nil || len(b) > maxSharedFile {
		return nil
	}
	tmp, err := os.CreateTemp(c.dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil // not shared; this worker has its value
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
	return nil
}

// lockHolderAlive says whether the process whose id is in lock still
// runs; a lock that cannot be read yet (just created) counts as held.
func lockHolderAlive(lock string) bool {
	b, err := os.ReadFile(lock)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		return true // being written
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// reference returns the float64 reference for key: shared between the
// workers when the cache is enabled, else made by ref.
func (c *hostCache) reference(key string, ref func() (*profiler.Reference, error)) (*profiler.Reference, error) {
	if !c.enabled() {
		return ref()
	}
	var out *profiler.Reference
	dec := func(b []byte) error {
		var r profiler.Reference
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
			return err
		}
		out = &r
		return nil
	}
	err := c.once("ref", key, dec, func() ([]byte, error) {
		r, err := ref()
		if err != nil {
			return nil, err
		}
		out = r
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(r); err != nil {
			return nil, nil // not shareable; this worker has it
		}
		return b.Bytes(), nil
	})
	return out, err
}

// ShareHostWork makes the Runner share the inputs it generates and the
// float64 references it computes through dir with the other workers of a
// sweep (see SharedCacheEnv; "" shares nothing), and generate inputs on
// at most threads goroutines (0: every core).
func (r *Runner) ShareHostWork(dir string, threads int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shared = &hostCache{dir: dir}
	r.fillThreads = max(threads, 0)
}

// hostSharer is an executor that can share host work (a Runner).
type hostSharer interface{ ShareHostWork(dir string, threads int) }

// ShareHost makes the Runner keep its share of the host's memory for
// inputs when workers workers run on the host (see inputBudget).
func (r *Runner) ShareHost(workers int) {
	avail, _ := HostMemory()
	r.mu.Lock()
	r.inputBudget = inputBudget(avail, workers)
	r.mu.Unlock()
}

// shareFromEnv hands exec the shared directory, thread count and worker
// count its parent passed in SharedCacheEnv, FillThreadsEnv and
// HostWorkersEnv (a worker).
func shareFromEnv(exec profiler.Executor) {
	if hs, ok := exec.(interface{ ShareHost(workers int) }); ok {
		if n, err := strconv.Atoi(os.Getenv(HostWorkersEnv)); err == nil && n > 1 {
			hs.ShareHost(n)
		}
	}
	hs, ok := exec.(hostSharer)
	dir := os.Getenv(SharedCacheEnv)
	if !ok || dir == "" {
		return
	}
	threads, _ := strconv.Atoi(os.Getenv(FillThreadsEnv))
	hs.ShareHostWork(dir, threads)
}
