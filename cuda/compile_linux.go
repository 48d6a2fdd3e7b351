//go:build linux

package cuda

import (
	"fmt"
	"maps"
	"strings"
	"unsafe"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

type kernel struct {
	mod, fn uintptr
	name    string
	attrs   profiler.KernelAttrs
	maxDyn  int // current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	// coresident caches whether a cooperative launch's grid is resident
	// at once (nil) or why not, so that no occupancy query runs between
	// a timed launch's events.
	coresident map[coresidentKey]error
}

type coresidentKey struct {
	threads, dyn int
	grid         [3]int
}

func (k *kernel) Attrs() profiler.KernelAttrs { return k.attrs }

// Compile builds p with NVRTC (or takes the cubin from the cache) and loads
// it. NVRTC runs on the caller's goroutine, so compiling the next spec can
// overlap timing the current one; loading runs on the CUDA thread (or
// ahead, on the loader thread: Preload). A user program's entry is looked
// up by its lowered (mangled) name.
func (b *backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	ce, err := b.cubin(p)
	if err != nil {
		return nil, err
	}
	var k *kernel
	err = b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		var err error
		k, err = b.loadKernel(p, ce)
		return b.check(err)
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// loadKernel loads ce, the cubin of p, as a module of the context and
// finds p's entry in it. On a thread where the context is current (the
// CUDA thread, or the loader thread).
func (b *backend) loadKernel(p profiler.Program, ce cacheEntry) (*kernel, error) {
	symbol := p.Entry
	if ce.Lowered != "" {
		symbol = ce.Lowered
	}
	k := &kernel{name: p.Entry}
	d := b.drv
	if err := d.call("cuModuleLoadData", d.cuModuleLoadData, uintptr(unsafe.Pointer(&k.mod)), uintptr(unsafe.Pointer(&ce.Cubin[0]))); err != nil {
		return nil, err
	}
	if err := d.call("cuModuleGetFunction", d.cuModuleGetFunction, uintptr(unsafe.Pointer(&k.fn)), k.mod, uintptr(unsafe.Pointer(cString(symbol)))); err != nil {
		d.call("cuModuleUnload", d.cuModuleUnload, k.mod)
		src, file, _, _ := programSource(p, b.headers)
		what := "is it a __global__ function?"
		if ce.Lowered == "" && p.Code != "" {
			what = "this NVRTC looks kernels up by their plain names: is it extern \"C\" __global__?"
		}
		return nil, fmt.Errorf("%w (%v)", entryNotFound(file, p.Entry, what, src), err)
	}
	k.attrs, k.maxDyn = b.funcAttrs(k.fn)
	k.attrs.StaticTGM = userStaticShared(k.attrs.StaticTGM, readCubin(ce.Cubin, symbol, b.arch))
	return k, nil
}

// funcAttrs reads a loaded kernel's registers, shared memory and limits.
// On a thread where the context is current.
func (b *backend) funcAttrs(fn uintptr) (profiler.KernelAttrs, int) {
	d := b.drv
	fa := func(a int) int {
		var v int32
		d.call("cuFuncGetAttribute", d.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), fn)
		return int(v)
	}
	return profiler.KernelAttrs{
		StaticTGM:      fa(funcAttrSharedSizeBytes),
		MaxThreads:     fa(funcAttrMaxThreads),
		ExecutionWidth: 32,
		Registers:      fa(funcAttrNumRegs),
		SpillBytes:     fa(funcAttrLocalSizeBytes),
	}, fa(funcAttrMaxDynamicShared)
}

// cubin compiles p with NVRTC or takes it from the cache. Two callers
// asking for one program at once share one compile.
func (b *backend) cubin(p profiler.Program) (cacheEntry, error) {
	src, name, hdrs, err := programSource(p, b.headers)
	if err != nil {
		return cacheEntry{}, err
	}
	opts, expr, key := b.compileKey(p, src, hdrs)
	for {
		if c, ok := b.cache.get(key); ok {
			return c, nil
		}
		b.statsMu.Lock()
		wait, busy := b.inflight[key]
		if !busy {
			if b.inflight == nil {
				b.inflight = map[string]chan struct{}{}
			}
			done := make(chan struct{})
			b.inflight[key] = done
			b.statsMu.Unlock()
			release := b.cache.lockCompile(key)
			ce, cached := b.cache.get(key) // another process may have compiled it meanwhile
			var err error
			if !cached {
				var c compiled
				c, err = compileProgram(b.nv, src, name, hdrs, opts, p.Entry, expr)
				ce = cacheEntry{Cubin: c.cubin, Lowered: c.lowered}
				if err == nil {
					b.cache.put(key, ce)
				}
			}
			release()
			b.statsMu.Lock()
			if err == nil && !cached {
				b.compiles++
			}
			delete(b.inflight, key)
			b.statsMu.Unlock()
			close(done)
			if err != nil {
				return cacheEntry{}, fmt.Errorf("NVRTC could not compile %s for %s: %w", name, b.arch, err)
			}
			return ce, nil
		}
		b.statsMu.Unlock()
		<-wait // then take it from the cache, or compile it ourselves if that one failed
	}
}

// compileKey is p's NVRTC options, entry name expression and compile
// cache key, for its source src and headers hdrs (programSource).
func (b *backend) compileKey(p profiler.Program, src string, hdrs map[string]string) (opts []string, expr, key string) {
	opts = CompileOptions(p, b.arch)
	expr = entryExpression(p, b.nv.namesEntries())
	return opts, expr, CompileKey(src, hdrs, p.Macros, b.arch, compileKeyTail(b.compiler, opts, expr, p.IncludeDirs))
}

// compileProgram compiles with the entry as a name expression. When that
// fails with an error in the program's own files (a template instance
// that does not compile), the error leads with it. Otherwise it compiles
// once more without the expression: if the program then compiles, the
// entry is what NVRTC could not resolve, and the error says so, with
// NVRTC's words and the kernels the source declares.
// A failed compile whose errors concern CUB ends with a hint naming the
// CUB of the include path (withCUBHint); one whose program got a
// storage-only __half or __nv_bfloat16, with how to point mltop at the
// toolkit's headers (withStorageHint).
func compileProgram(nv *nvrtc, src, name string, hdrs map[string]string, opts []string, entry, expr string) (compiled, error) {
	c, err := compileOrExplain(nv, src, name, hdrs, opts, entry, expr)
	return c, withStorageHint(withCUBHint(err, c.log, opts, hdrs), src, c.log)
}

// compileOrExplain is compileProgram without the hint.
func compileOrExplain(nv *nvrtc, src, name string, hdrs map[string]string, opts []string, entry, expr string) (compiled, error) {
	c, err := nv.compile(src, name, hdrs, opts, expr)
	if err == nil {
		return c, nil
	}
	if aerr := nv.archError(opts, c.log); aerr != nil {
		return c, aerr
	}
	if serr := sourceCompileError(err, c.log); serr != nil {
		return c, serr
	}
	if expr == "" {
		return c, err
	}
	if _, plain := nv.compile(src, name, hdrs, opts, ""); plain != nil {
		return c, err // the program itself does not compile
	}
	return c, entryNotFound(name, entry, "NVRTC cannot resolve it as a kernel name:\n"+strings.TrimSpace(c.log), src)
}

// programSource is what NVRTC compiles for p: a built-in shader, or a
// user kernel's own source (named by its real path, so that NVRTC's log
// points at the user's file:line) with its includes beside the built-in
// headers.
func programSource(p profiler.Program, builtin map[string]string) (src, name string, hdrs map[string]string, err error) {
	if p.Code == "" {
		src, err = shaders.Source("cuda", p.Source, ".cu")
		return src, p.Source + ".cu", builtin, err
	}
	hdrs = make(map[string]string, len(builtin)+len(p.Includes))
	maps.Copy(hdrs, builtin)
	maps.Copy(hdrs, p.Includes)
	name = p.File
	if name == "" {
		name = p.Source + ".cu"
	}
	return p.Code, name, hdrs, nil
}

// Precompile compiles p into the compile cache and returns when done
// (NVRTC needs no context, and is thread-safe: the run package calls this
// from a bounded pool of goroutines for the specs ahead of the one being
// measured, and the later Compile finds the cubin in the cache). An error
// is dropped here: that Compile compiles again and reports it on its spec.
func (b *backend) Precompile(p profiler.Program) { _, _ = b.cubin(p) }

// Stats reports the compile cache's hits and NVRTC compiles so far.
func (b *backend) Stats() CacheStats {
	b.cache.mu.Lock()
	defer b.cache.mu.Unlock()
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	return CacheStats{MemoryHits: b.cache.hits, DiskHits: b.cache.disk, Compiles: b.compiles}
}
