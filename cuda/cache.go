package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
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

// cacheEntry is one compiled program: the cubin and the lowered (mangled)
// name of the entry it was compiled for ("" for built-in shaders, whose
// entries are extern "C").
type cacheEntry struct {
	Cubin   []byte
	Lowered string
}

// cacheMagic starts every cache file; a new layout gets a new magic (and
// file suffix), so that files of another version are never misread.
const (
	cacheMagic  = "mltop-cuda-cache-2\n"
	cacheSuffix = ".cubin2"
)

// encode lays an entry out as the magic, the lowered name's length
// (uvarint), the lowered name, then the cubin.
func (e cacheEntry) encode() []byte {
	out := append([]byte(cacheMagic), binary.AppendUvarint(nil, uint64(len(e.Lowered)))...)
	out = append(out, e.Lowered...)
	return append(out, e.Cubin...)
}

// decodeCacheEntry reads what encode wrote; anything else is an error.
func decodeCacheEntry(b []byte) (cacheEntry, error) {
	rest, ok := bytes.CutPrefix(b, []byte(cacheMagic))
	if !ok {
		return cacheEntry{}, errors.New("not an mltop CUDA cache file of this version")
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return cacheEntry{}, errors.New("a cache file with a broken entry name")
	}
	rest = rest[w:]
	e := cacheEntry{Lowered: string(rest[:n]), Cubin: rest[n:]}
	if len(e.Cubin) == 0 {
		return cacheEntry{}, errors.New("a cache file without a cubin")
	}
	return e, nil
}

// cubinCache keeps compiled cubins in memory and in a directory (the user
// cache dir), so a sweep never compiles a program twice, even across runs.
// A dir of "" keeps the memory layer only.
type cubinCache struct {
	dir  string
	mu   sync.Mutex
	mem  map[string]cacheEntry
	hits int
	disk int
}

func newCubinCache(dir string) *cubinCache {
	return &cubinCache{dir: dir, mem: map[string]cacheEntry{}}
}

// CacheEnv names the folder of the compiled-kernel cache when it is not
// mltop's cache folder's cuda/ (tests give each run its own).
const CacheEnv = "MLTOP_CUDA_CACHE"

// DefaultCacheDir is $MLTOP_CUDA_CACHE, else profiler.CacheDir("cuda")
// (so $MLTOP_CACHE_DIR/cuda when that is set), or "" when there is no
// cache folder (the disk layer is then skipped).
func DefaultCacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	d, err := profiler.CacheDir("cuda")
	if err != nil {
		return ""
	}
	return d
}

func (c *cubinCache) get(key string) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.mem[key]; ok {
		c.hits++
		return e, true
	}
	if c.dir == "" {
		return cacheEntry{}, false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+cacheSuffix))
	if err != nil {
		return cacheEntry{}, false
	}
	e, err := decodeCacheEntry(b)
	if err != nil {
		return cacheEntry{}, false // compiled again, and the file rewritten
	}
	c.mem[key] = e
	c.disk++
	return e, true
}

// put stores an entry; a disk failure is not an error (the cache is an
// optimisation), the file is written atomically through a rename.
func (c *cubinCache) put(key string, e cacheEntry) {
	c.mu.Lock()
	c.mem[key] = e
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
	_, werr := tmp.Write(e.encode())
	cerr := tmp.Close()
	if errors.Join(werr, cerr) != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, key+cacheSuffix)); err != nil {
		os.Remove(tmp.Name())
	}
}

// CacheStats counts compile-cache hits: from memory and from disk.
type CacheStats struct {
	MemoryHits int
	DiskHits   int
	Compiles   int
}
