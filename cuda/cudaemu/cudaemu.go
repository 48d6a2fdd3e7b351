// Package cudaemu is a profiler.Backend that compiles a CUDA program with
// g++ against a CPU emulation of the CUDA C++ that kernels use (the
// headers under include/) and runs its launches, so that `mltop check
// --run` checks a CUDA kernel's outputs against the float64 reference on a
// machine without an NVIDIA GPU. It is the CUDA twin of metal/mslemu, and
// has the same rooms: Open, EmulatedDevice, Options, the Backend, and
// Refuse (what cannot be emulated, said before compiling).
//
// It proves indexing, reductions, synchronisation and the arguments'
// order; not speed, not that NVRTC accepts the text (`mltop check`
// compiles it with NVRTC for that), not the hardware's warp timing.
package cudaemu

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// shimFS holds the emulation's headers (include/): cuda_emu.h and the
// toolkit's header names that include it.
//
//go:embed all:include
var shimFS embed.FS

// ErrNoCompiler is Open's error when g++ is not on the PATH.
var ErrNoCompiler = errors.New("g++ not found on PATH: the CUDA emulation needs a C++20 compiler with _Float16 (g++ 12 or later)")

// EmulatedDevice is the device the emulation reports to the Runner: a
// Hopper-like GPU's limits (48 KiB of shared memory a block, 227 KiB with
// opt-in, 1024 threads a block, warps of 32), so plans are judged as on
// the GPU most users run; its timer says that times are not measured.
func EmulatedDevice() profiler.DeviceInfo {
	return profiler.DeviceInfo{
		Backend: "cuda", Name: "CUDA emulation (g++)", Vendor: "emulated", Arch: "sm_90 (emulated)",
		Units: 1, UnitName: "SM",
		TGMPerGroup: 48 << 10, TGMPerGroupOptIn: maxDynamicShared, TGMPerUnit: 228 << 10,
		MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32, SIMDWidth: 32,
		MaxGrid: [3]int{1<<31 - 1, 65535, 65535},
		Timer:   "emulated",
		Notes:   []string{"the CUDA emulation: one OS thread per GPU thread, blocks one after another; times are not the kernel's"},
	}
}

// maxDynamicShared is the most dynamic shared memory a launch may ask
// (H100's opt-in limit); cuda_emu.h's emu_dyn_smem has this size.
const maxDynamicShared = 227 << 10

// Options makes the Runner measure once and at once: timing is not what
// this backend is for.
func Options() profiler.Options { return profiler.EmulationOptions() }

// Backend is a profiler.Backend over the g++-compiled emulation.
type Backend struct {
	profiler.HostMemory // buffers in host memory
	dev                 profiler.DeviceInfo
	gxx                 string
	shim                string // the folder of the emulation's headers
	dir                 string // binaries and launch folders
	ownsDir             bool
	ctx                 context.Context
	progs               map[string]progResult        // by program: prepare's result
	syms                map[string]map[string][]byte // binary → symbol → bytes (WriteSymbol)
	n                   int
	// osThreads runs a block's threads as macOS does (OS threads passing
	// a baton) on any OS: SetOSThreads.
	osThreads bool
}

// Open returns a Backend for a command (`mltop check --run`) or a test:
// the headers are written from the embedded copy into a temporary folder
// that Close removes, and ctx ends a g++ or an emulated kernel that is
// running (ctrl-C). It returns ErrNoCompiler when g++ is not on PATH.
func Open(ctx context.Context, dev profiler.DeviceInfo) (*Backend, error) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return nil, ErrNoCompiler
	}
	dir, err := os.MkdirTemp("", "mltop-cudaemu-")
	if err != nil {
		return nil, fmt.Errorf("the CUDA emulation's folder: %w", err)
	}
	shim := filepath.Join(dir, "include")
	if err := writeTree(shimFS, "include", shim); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the CUDA emulation's headers: %w", err)
	}
	return &Backend{dev: dev, gxx: gxx, shim: shim, dir: dir, ownsDir: true, ctx: ctx,
		progs: map[string]progResult{}, syms: map[string]map[string][]byte{}}, nil
}

// writeTree copies the folder root of fsys to dst.
func writeTree(fsys fs.FS, root, dst string) error {
	return fs.WalkDir(fsys, root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, root), "/")))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

func (e *Backend) command(name string, args ...string) *exec.Cmd {
	return exec.CommandContext(e.ctx, name, args...)
}

// stopped is the context's error once it has ended.
func (e *Backend) stopped() error { return e.ctx.Err() }

type kernel struct{ bin string }

func (kernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{ExecutionWidth: 32} }

func (e *Backend) Info() profiler.DeviceInfo { return e.dev }

// gxxFlags are the flags of every emulated compile (and of its -E scan):
// the emulation's headers first, then the program's folders (dirs.before),
// the C++ library, and last dirs.after.
func (e *Backend) gxxFlags(dirs includeDirs) []string {
	f := []string{"-std=c++20", "-O1", "-pthread", "-w", "-I", e.shim}
	for _, d := range dirs.before {
		f = append(f, "-I", d)
	}
	for _, d := range dirs.after {
		f = append(f, "-idirafter", d)
	}
	if e.osThreads {
		f = append(f, "-DEMU_THREAD_FIBERS=1")
	}
	return append(f, "-include", "cuda_emu.h")
}

// SetOSThreads makes the programs compiled from now on run a block's
// threads as on macOS, one OS thread each, handing a baton (the same order
// as the fibers Linux uses, slower): so that path is tested on Linux.
func (e *Backend) SetOSThreads(on bool) { e.osThreads = on }

// includeDirs are a program's include folders, before and after the C++
// library's.
type includeDirs struct{ before, after []string }

// cHeaders are the C library's headers, which the C++ library's folders
// have: mltop's NVRTC stubs of them are not used.
var cHeaders = map[string]bool{"assert.h": true, "complex.h": true, "ctype.h": true, "errno.h": true, "fenv.h": true,
	"float.h": true, "inttypes.h": true, "limits.h": true, "locale.h": true, "math.h": true, "setjmp.h": true,
	"signal.h": true, "stdarg.h": true, "stdbool.h": true, "stddef.h": true, "stdint.h": true, "stdio.h": true,
	"stdlib.h": true, "string.h": true, "time.h": true, "wchar.h": true, "wctype.h": true, "unistd.h": true}

// systemView says whether an include view named n stands for a header of
// the C or C++ library (<cmath>, <stdio.h>, <sys/time.h>): those come after
// the library's own, which g++ uses; the others (the program's own headers,
// mltop's stubs of host-only ones such as cublas_v2.h) come before it.
func systemView(n string) bool {
	if strings.HasPrefix(n, "sys/") || cHeaders[n] {
		return true
	}
	return !strings.Contains(n, "/") && !strings.Contains(n, ".")
}

// Compile builds p: a user program as kernels/user prepares it for NVRTC
// (its text, include views and entry name expression), or one of mltop's
// own CUDA shaders with its knob macros. A construct the emulation cannot
// run is a *Refusal (Refuse).
func (e *Backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	pr, err := e.prepare(p)
	if err != nil {
		return nil, err
	}
	if pr.bin != "" {
		return kernel{pr.bin}, nil
	}
	bin := filepath.Join(filepath.Dir(pr.cc), "k")
	args := append(e.gxxFlags(pr.dirs), "-rdynamic", "-o", bin, pr.cc, "-ldl")
	if out, err := e.command(e.gxx, args...).CombinedOutput(); err != nil {
		if err := e.stopped(); err != nil {
			return nil, fmt.Errorf("g++ stopped: %w", err)
		}
		return nil, fmt.Errorf("the CUDA emulation (g++) cannot compile %s (entry %s): %v: what g++ names below is an error in the source, or CUDA the emulation lacks (where NVRTC compiles the source, `mltop check` says so: then run it on a machine with an NVIDIA GPU)\n%s", pr.name, pr.entry, err, gxxErrors(string(out), e.shim))
	}
	pr.bin = bin
	return kernel{bin}, nil
}

// Refuse says, before anything is compiled, whether p uses a construct the
// emulation cannot run (a *Refusal naming it and its line), or includes a
// library it does not have; nil when the emulation can try it.
func (e *Backend) Refuse(p profiler.Program) error {
	_, err := e.prepare(p)
	return err
}

// prepared is a program written out for g++: its folder's k.cc, the
// include folders, and once compiled its binary.
type prepared struct {
	cc, name, entry string
	dirs            includeDirs
	bin             string
}

// prepare writes p's text (forEmulation) and include views into a folder
// of their own and scans it for what the emulation refuses, once per
// program.
func (e *Backend) prepare(p profiler.Program) (*prepared, error) {
	src, name, includes, err := programText(p)
	if err != nil {
		return nil, err
	}
	entry := strings.TrimSpace(p.Entry)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%v\x00", name, entry, src, e.osThreads)
	for _, k := range slices.Sorted(maps.Keys(includes)) {
		fmt.Fprintf(h, "%s\x00%s\x00", k, includes[k])
	}
	for _, d := range p.IncludeDirs {
		fmt.Fprintf(h, "%s\x00", d)
	}
	key := hex.EncodeToString(h.Sum(nil))
	if pr, ok := e.progs[key]; ok {
		return pr.p, pr.err
	}
	pr, err := e.write(src, name, entry, includes, p.IncludeDirs)
	if err == nil {
		err = e.refuse(pr.cc, pr.dirs)
	}
	if err != nil && e.stopped() != nil {
		return nil, err // not kept: a later run tries again
	}
	e.progs[key] = progResult{pr, err}
	return pr, err
}

type progResult struct {
	p   *prepared
	err error
}

// write puts a program's files into a new folder.
func (e *Backend) write(src, name, entry string, includes map[string]string, incDirs []string) (*prepared, error) {
	e.n++
	work := filepath.Join(e.dir, fmt.Sprintf("k%d", e.n))
	views, std := filepath.Join(work, "views"), filepath.Join(work, "std")
	for n, text := range includes {
		if n == "mltop_user.cuh" { // the emulation's own (include/) stands in
			continue
		}
		dir := views
		if systemView(n) {
			dir = std
		}
		out := filepath.Join(dir, filepath.FromSlash(n))
		if !strings.HasPrefix(out, dir+string(filepath.Separator)) {
			continue // a name that leaves the folder is no include view
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(out, []byte(forEmulation(text)), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(views, 0o755); err != nil {
		return nil, err
	}
	cc := filepath.Join(work, "k.cc")
	text := forEmulation(src) + "\n#line 1 \"mltop-cudaemu-main.cc\"\nint main(int argc, char** argv) { return emu_main(argc, argv, &" + entry + "); }\n"
	if err := os.WriteFile(cc, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return &prepared{cc: cc, name: name, entry: entry, dirs: includeDirs{before: append([]string{views}, incDirs...), after: []string{std}}}, nil
}

// programText is the text the emulation compiles for p, the name its
// messages give it and its include views: a user program's own (the
// knob macros are in its text), or a built-in shader with its macros as
// #define lines ahead of it.
func programText(p profiler.Program) (src, name string, includes map[string]string, err error) {
	if p.Code != "" {
		name = p.File
		if name == "" {
			name = p.Source + ".cu"
		}
		return defines(p.Macros) + p.Code, name, p.Includes, nil
	}
	if src, err = shaders.Source("cuda", p.Source, ".cu"); err != nil {
		return "", "", nil, err
	}
	if includes, err = shaders.Headers("cuda"); err != nil {
		return "", "", nil, err
	}
	name = p.Source + ".cu"
	return defines(p.Macros) + fmt.Sprintf("#line 1 %q\n", name) + src, name, includes, nil
}

// defines are macros as #define lines.
func defines(ms []profiler.Macro) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "#define %s %s\n", m.Name, strings.ReplaceAll(m.Value, "\n", " "))
	}
	return b.String()
}

// gxxErrors keeps g++'s error lines and the source lines they quote (at
// most 12), with the emulation's folder named cudaemu/.
func gxxErrors(out, shim string) string {
	out = strings.ReplaceAll(out, shim+string(filepath.Separator), "cudaemu/")
	var kept []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "error:") {
			continue
		}
		kept = append(kept, l)
		if i+1 < len(lines) && strings.Contains(lines[i+1], " | ") {
			kept = append(kept, lines[i+1])
		}
		if len(kept) >= 12 {
			break
		}
	}
	if len(kept) == 0 {
		return strings.TrimSpace(out)
	}
	return strings.Join(kept, "\n")
}

// Time runs the launches reps times, as a GPU backend does, so that the
// buffers hold what a GPU's timed reps leave; the samples are a constant,
// which ends measuring at once (timing is not what this backend is for).
func (e *Backend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	return profiler.EmulatedTiming(ls, reps, mode, e.Run)
}

func (e *Backend) Occupancy(l profiler.Launch) profiler.Occupancy {
	return profiler.Occupancy{Dispatch: l.Dispatch.Name, Reason: "the CUDA emulation does not model occupancy"}
}

// Close removes the Backend's folder (headers, binaries and buffers).
func (e *Backend) Close() error {
	if e.ownsDir {
		return os.RemoveAll(e.dir)
	}
	return nil
}
