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
}

func (k *kernel) Attrs() profiler.KernelAttrs { return k.attrs }

// Compile builds p with NVRTC (or takes the cubin from the cache) and loads
// it. NVRTC runs on the caller's goroutine, so compiling the next spec can
// overlap timing the current one; loading runs on the CUDA thread.
func (b *backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	cubin, err := b.cubin(p)
	if err != nil {
		return nil, err
	}
	k := &kernel{name: p.Entry}
	err = b.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		d := b.drv
		if err := b.check(d.call("cuModuleLoadData", d.cuModuleLoadData, uintptr(unsafe.Pointer(&k.mod)), uintptr(unsafe.Pointer(&cubin[0])))); err != nil {
			return err
		}
		if err := d.call("cuModuleGetFunction", d.cuModuleGetFunction, uintptr(unsafe.Pointer(&k.fn)), k.mod, uintptr(unsafe.Pointer(cString(p.Entry)))); err != nil {
			d.call("cuModuleUnload", d.cuModuleUnload, k.mod)
			file := p.Source + ".cu"
			if p.Code != "" {
				file = p.File
			}
			return fmt.Errorf("%s has no kernel %q (is it extern \"C\" __global__?): %w", file, p.Entry, err)
		}
		fa := func(a int) int {
			var v int32
			d.call("cuFuncGetAttribute", d.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), k.fn)
			return int(v)
		}
		k.attrs = profiler.KernelAttrs{
			StaticTGM:      fa(funcAttrSharedSizeBytes),
			MaxThreads:     fa(funcAttrMaxThreads),
			ExecutionWidth: 32,
			Registers:      fa(funcAttrNumRegs),
			SpillBytes:     fa(funcAttrLocalSizeBytes),
		}
		k.maxDyn = fa(funcAttrMaxDynamicShared)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// cubin compiles p with NVRTC or takes it from the cache. Two callers
// asking for one program at once share one compile.
func (b *backend) cubin(p profiler.Program) ([]byte, error) {
	src, name, hdrs, err := b.programSource(p)
	if err != nil {
		return nil, err
	}
	opts := CompileOptions(p, b.arch)
	key := CompileKey(src, hdrs, p.Macros, b.arch, b.compiler+" "+strings.Join(opts, " ")+" "+includeFingerprint(p.IncludeDirs))
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
			c, _, err := b.nv.compile(src, name, hdrs, opts)
			if err == nil {
				b.cache.put(key, c)
			}
			b.statsMu.Lock()
			if err == nil {
				b.compiles++
			}
			delete(b.inflight, key)
			b.statsMu.Unlock()
			close(done)
			if err != nil {
				return nil, fmt.Errorf("NVRTC could not compile %s for %s: %w", name, b.arch, err)
			}
			return c, nil
		}
		b.statsMu.Unlock()
		<-wait // then take it from the cache, or compile it ourselves if that one failed
	}
}

// programSource is what NVRTC compiles for p: a built-in shader, or a
// user kernel's own source (named by its real path, so that NVRTC's log
// points at the user's file:line) with its includes beside the built-in
// headers.
func (b *backend) programSource(p profiler.Program) (src, name string, hdrs map[string]string, err error) {
	if p.Code == "" {
		src, err = shaders.Source("cuda", p.Source, ".cu")
		return src, p.Source + ".cu", b.headers, err
	}
	hdrs = make(map[string]string, len(b.headers)+len(p.Includes))
	maps.Copy(hdrs, b.headers)
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
