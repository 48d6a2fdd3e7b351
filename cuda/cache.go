package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// CompileKey identifies a compiled program: the source and every header
// (by content), the macros, the target architecture and the compiler
// version. Anything that can change the cubin is in the key.
func CompileKey(source string, headers map[string]string, macros []profiler.Macro, arch, compiler string) string {
	h := sha256.New()
	w := func(s string) {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	w(source)
	names := make([]string, 0, len(headers))
	for n := range headers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w(n)
		w(headers[n])
	}
	for _, m := range macros {
		w(m.Name + "=" + m.Value)
	}
	w(arch)
	w(compiler)
	return hex.EncodeToString(h.Sum(nil))
}

// cubinCache keeps compiled cubins in memory and in a directory (the user
// cache dir), so a sweep never compiles a program twice, even across runs.
// A dir of "" keeps the memory layer only.
type cubinCache struct {
	dir  string
	mu   sync.Mutex
	mem  map[string][]byte
	hits int
	disk int
}

func newCubinCache(dir string) *cubinCache {
	return &cubinCache{dir: dir, mem: map[string][]byte{}}
}

// DefaultCacheDir is os.UserCacheDir()/mltop/cuda, or "" when there is no
// user cache dir (the disk layer is then skipped).
func DefaultCacheDir() string {
	if d := os.Getenv("MLTOP_CUDA_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "mltop", "cuda")
}

func (c *cubinCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.mem[key]; ok {
		c.hits++
		return b, true
	}
	if c.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".cubin"))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	c.mem[key] = b
	c.disk++
	return b, true
}

// put stores a cubin; a disk failure is not an error (the cache is an
// optimisation), the file is written atomically through a rename.
func (c *cubinCache) put(key string, cubin []byte) {
	c.mu.Lock()
	c.mem[key] = cubin
	dir := c.dir
	c.mu.Unlock()
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(cubin)
	cerr := tmp.Close()
	if errors.Join(werr, cerr) != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, key+".cubin")); err != nil {
		os.Remove(tmp.Name())
	}
}

// CacheStats counts compile-cache hits: from memory and from disk.
type CacheStats struct {
	MemoryHits int
	DiskHits   int
	Compiles   int
}
