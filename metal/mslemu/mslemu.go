// Package mslemu is a profiler.Backend that compiles mltop's Metal kernel
// sources with g++ against a CPU emulation of the MSL subset they use
// (metal/testdata/mslemu) and runs them, so the real Runner can check them
// against the float64 references on a machine without a Mac (test
// support), and CheckUser, which compiles a user kernel that way for
// `mltop check`.
//
// It proves the tile logic, masks, barriers, atomics, buffer order, scalar
// layout and macros; it cannot prove that the Metal compiler accepts the
// text or the hardware's simdgroup fragment layout (see mltop_common.h).
package mslemu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/shaders"
)

// main reads the buffers and scalar struct from files, runs CALL over the
// grid, and writes the buffers back.
const emuMain = `
#include <cstdio>
#include <string>
struct emu_bound {
  char* p;
  char* data() const { return p; }
};
static std::vector<char> emu_read(const std::string& p) {
  std::vector<char> v;
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) { std::perror(p.c_str()); std::exit(2); }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  v.resize(v.size() + 64); // a scalar struct may be read whole
  return v;
}
int main(int argc, char** argv) {
  if (argc != 11) { std::fprintf(stderr, "usage: dir gx gy gz nt nbufs dx dy dz tgm_bytes\n"); return 2; }
  const std::string dir = argv[1];
  const uint gx = std::atoi(argv[2]), gy = std::atoi(argv[3]), gz = std::atoi(argv[4]), nt = std::atoi(argv[5]);
  const int nb = std::atoi(argv[6]);
  const uint3 gdim{uint(std::atoi(argv[7])), uint(std::atoi(argv[8])), uint(std::atoi(argv[9]))};
  const uint3 ngroups{gx, gy, gz};
  emu_tgm_bytes = uint(std::atoi(argv[10]));
  // b[i] is the memory at index i; an index whose bufI.alias names index j
  // (the same buffer bound twice, as setBuffer allows) shares j's memory,
  // so the kernel sees one address, as on Metal (ggml's src1 != src0).
  std::vector<std::vector<char>> store(nb);
  std::vector<emu_bound> b(nb);
  std::vector<int> alias(nb, -1);
  for (int i = 0; i < nb; i++) {
    if (FILE* f = std::fopen((dir + "/buf" + std::to_string(i) + ".alias").c_str(), "r")) {
      if (std::fscanf(f, "%d", &alias[i]) != 1 || alias[i] < 0 || alias[i] >= i) { std::fprintf(stderr, "bad alias of buffer %d\n", i); return 2; }
      std::fclose(f);
      continue;
    }
    store[i] = emu_read(dir + "/buf" + std::to_string(i) + ".bin");
  }
  for (int i = 0; i < nb; i++) b[i].p = store[alias[i] < 0 ? i : alias[i]].data();
  std::vector<char> sc = emu_read(dir + "/scalars.bin");
  emu_dispatch(gx, gy, gz, nt, [&](uint3 tg, uint tid, ushort sg, ushort lane) { CALL });
  for (int i = 0; i < nb; i++) {
    if (alias[i] >= 0) continue;
    FILE* f = std::fopen((dir + "/buf" + std::to_string(i) + ".bin").c_str(), "wb");
    std::fwrite(store[i].data(), 1, store[i].size() - 64, f);
    std::fclose(f);
  }
  return 0;
}
`

// The emulator calls an entry point with the Plan's buffers b[i], the
// scalar struct's bytes sc and the thread coordinates tg, tid, sg, lane.
// CallFor derives that call from the kernel's own signature, so a new
// family's .metal runs here without a hand-kept table.
var (
	kernelSig = regexp.MustCompile(`(?s)\[\[kernel[^\]]*\]\]\s*void\s+(\w+)\s*\((.*?)\)\s*\{`)
	bufParam  = regexp.MustCompile(`^(const\s+)?device\s+([\w:]+)\s*\*\s*\w+\s*\[\[buffer\((\d+)\)\]\]$`)
	cstParam  = regexp.MustCompile(`^constant\s+(\w+)\s*&\s*\w+\s*\[\[buffer\((\d+)\)\]\]$`)
	posParam  = regexp.MustCompile(`^(\w+)\s+\w+\s*\[\[(\w+)\]\]$`)
)

// CallFor returns the C++ call of entry in the MSL source src.
func CallFor(src, entry string) (string, error) {
	for _, m := range kernelSig.FindAllStringSubmatch(src, -1) {
		if m[1] != entry {
			continue
		}
		var args []string
		for _, raw := range strings.Split(m[2], ",") {
			prm := strings.Join(strings.Fields(raw), " ")
			if b := bufParam.FindStringSubmatch(prm); b != nil {
				args = append(args, fmt.Sprintf("(%s%s*)b[%s].data()", b[1], b[2], b[3]))
				continue
			}
			if c := cstParam.FindStringSubmatch(prm); c != nil {
				args = append(args, "*("+c[1]+"*)sc.data()")
				continue
			}
			pp := posParam.FindStringSubmatch(prm)
			if pp == nil {
				return "", fmt.Errorf("kernel %s: the emulator cannot pass parameter %q", entry, prm)
			}
			switch pp[2] {
			case "threadgroup_position_in_grid":
				if pp[1] == "uint3" {
					args = append(args, "tg")
				} else {
					args = append(args, "tg.x")
				}
			case "thread_index_in_threadgroup":
				args = append(args, "tid")
			case "simdgroup_index_in_threadgroup":
				args = append(args, "sg")
			case "thread_index_in_simdgroup":
				args = append(args, "lane")
			case "threadgroups_per_grid":
				args = append(args, "gx")
			default:
				return "", fmt.Errorf("kernel %s: the emulator has no value for [[%s]] (parameter %q)", entry, pp[2], prm)
			}
		}
		return entry + "(" + strings.Join(args, ", ") + ");", nil
	}
	return "", fmt.Errorf("no [[kernel]] void %s(...) in the source", entry)
}

// Backend is a profiler.Backend over the g++-compiled emulation.
type Backend struct {
	profiler.HostMemory // buffers in host memory
	dev                 profiler.DeviceInfo
	// NativeBF16 compiles with __HAVE_BFLOAT__ (Metal 3.1's bfloat branch).
	// The Runner's kernel cache does not know about it: use a Runner per
	// value.
	NativeBF16 bool

	gxx, shim, dir string
	// src is where the precompiled metal_stdlib's headers come from
	// (includeDir); shim is their folder when there is none.
	src   shimSource
	bins  map[string]string
	slots map[string][]metal.Slot // by binary: user kernels' parameters (metal.Bind)
	n     int
	// ctx ends g++ and the emulated kernels (Open; nil for New's), and
	// ownsDir says that Close removes dir (Open made it, not a test).
	ctx     context.Context
	ownsDir bool
}

// TB is the part of testing.TB that New uses (the package does not import
// testing: `mltop check` links it).
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	TempDir() string
}

// New returns a Backend that reports dev. shim is the directory of the MSL
// emulation headers (metal/testdata/mslemu). It skips t when g++ is
// missing.
func New(t TB, shim string, dev profiler.DeviceInfo) *Backend {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the MSL emulation test needs a C++20 compiler with _Float16")
	}
	shim, err = filepath.Abs(shim)
	if err != nil {
		t.Fatal(err)
	}
	// Reading the shim lets `go test`'s cache notice when it changes (g++
	// reads it outside the test's view).
	ents, err := os.ReadDir(shim)
	if err != nil {
		t.Fatalf("the MSL emulation shim: %v", err)
	}
	for _, e := range ents {
		if _, err := os.ReadFile(filepath.Join(shim, e.Name())); err != nil {
			t.Fatalf("the MSL emulation shim: %v", err)
		}
	}
	return &Backend{dev: dev, gxx: gxx, shim: shim, src: dirShim(shim), dir: t.TempDir(), bins: map[string]string{}, slots: map[string][]metal.Slot{}}
}

// Options makes the Runner measure once and at once: timing is not what
// this backend is for.
func Options() profiler.Options { return profiler.EmulationOptions() }

// Check runs s and fails t unless it ran and its verdict passed.
func Check(t interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}, r *run.Runner, s profiler.Spec, opt profiler.Options) {
	t.Helper()
	res := r.Run(context.Background(), s, opt, nil)
	if res.Status != profiler.StatusOK || res.Verdict == nil || !res.Verdict.Pass {
		t.Fatalf("status %s: %s\nverdict %+v", res.Status, res.Error, res.Verdict)
	}
	t.Logf("max abs err %.3g, max rel err %.3g over %d elements (%s)", res.Verdict.MaxAbsErr, res.Verdict.MaxRelErr, res.Verdict.Checked, res.Verdict.Rows)
}

type kernel struct{ bin string }

func (kernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{} }

func (e *Backend) Info() profiler.DeviceInfo { return e.dev }

func (e *Backend) Compile(p profiler.Program) (profiler.Kernel, error) {
	if p.Code != "" {
		return e.compileUser(p)
	}
	src, err := shaders.Source("metal", p.Source, ".metal")
	if err != nil {
		return nil, err
	}
	hdrs, err := shaders.Headers("metal")
	if err != nil {
		return nil, err
	}
	macros, err := metal.MacroPairs(p.Macros)
	if err != nil {
		return nil, err
	}
	full := metal.AssembleSource(hdrs[metal.CommonHeader], src)
	key := metal.CacheKey(full, p.Entry, metal.CompileOptions{Macros: macros}) + fmt.Sprint(e.NativeBF16)
	if bin, ok := e.bins[key]; ok {
		return kernel{bin}, nil
	}
	call, err := CallFor(src, p.Entry)
	if err != nil {
		return nil, fmt.Errorf("%s.metal: %w", p.Source, err)
	}
	return e.build(full, call, macros, p.Source, key)
}

// compileUser builds a user kernel's own source (kernels/user: the macros
// are already in the code), calling its entry with arguments made from its
// signature. Function constants become constexprs of their values; an
// entry that is a template's [[host_name]] gets a pointer of that name to
// the instantiation, and its parameters are read from the template with
// the template arguments put in.
func (e *Backend) compileUser(p profiler.Program) (profiler.Kernel, error) {
	full, err := metal.AssembleUserSource(p)
	if err != nil {
		return nil, err
	}
	vals, err := metal.ResolveConstants(full, p.Constants)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.File, err)
	}
	key := metal.CacheKey(full, p.Entry, metal.CompileOptions{Constants: vals}) + fmt.Sprint(e.NativeBF16)
	if bin, ok := e.bins[key]; ok {
		return kernel{bin}, nil
	}
	full, sig, call, err := emulatedEntry(full, vals, p)
	if err != nil {
		return nil, err
	}
	slots, err := metal.Slots(sig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.File, err)
	}
	k, err := e.build(full, call, nil, p.Source, key)
	if err != nil {
		return nil, err
	}
	// A user kernel's buffers and scalars go where its parameters say
	// (metal.Bind); a kernel without [[buffer]] parameters still is one.
	if slots == nil {
		slots = []metal.Slot{}
	}
	e.slots[k.(kernel).bin] = slots
	return k, nil
}

// emulatedEntry is what the emulation compiles for a user program: its
// function constants inlined with their values, and the call of its
// entry (a kernel, a [[host_name]] instantiation, or a template with its
// arguments, instantiated as metal.InstantiateEntry says) with its
// signature.
// The runner (compileUser) and mltop check (CheckUser) share it.
func emulatedEntry(full string, vals []metal.ConstantValue, p profiler.Program) (string, csrc.Signature, string, error) {
	// a template entry (scale_rows<float>) launches its host name
	full, entry, err := metal.InstantiateEntry(full, p.Entry)
	if err != nil {
		return "", csrc.Signature{}, "", fmt.Errorf("%s: %w", p.File, err)
	}
	p.Entry = entry
	if decls, err := metal.FunctionConstants(full); err != nil {
		return "", csrc.Signature{}, "", fmt.Errorf("%s: %w", p.File, err)
	} else if len(decls) > 0 {
		if full, err = metal.InlineFunctionConstants(full, withZeroDefaults(full, p.Entry, decls, vals)); err != nil {
			return "", csrc.Signature{}, "", fmt.Errorf("%s: %w", p.File, err)
		}
	}
	sig, err := userEntry(full, p)
	if err != nil {
		return "", csrc.Signature{}, "", err
	}
	call, err := UserCall(sig)
	if err != nil {
		return "", csrc.Signature{}, "", err
	}
	return full, sig, call, nil
}

// withZeroDefaults gives each constant vals leave unset that the source
// does not test with is_function_constant_defined and that the entry's
// kernel (and what it reaches) does not read the value {}: the emulation
// compiles the whole file, and kernels not launched (MLX's vjp kernels
// beside the forward one) need some value, as on Metal they need none.
// A constant the entry reads stays unset, an error as on Metal.
func withZeroDefaults(src, entry string, decls []metal.DeclaredConstant, vals []metal.ConstantValue) []metal.ConstantValue {
	set := map[int]bool{}
	for _, v := range vals {
		set[v.Index] = true
	}
	if hosts, err := metal.HostNames(src); err == nil {
		if inst, ok := hosts[entry]; ok {
			entry = inst.Template
		}
	}
	entry = entry[strings.LastIndex(entry, ":")+1:]
	notEntry := func(kernel string) bool { return kernel != entry }
	out := slices.Clone(vals)
	var reached map[string]bool // read on the first constant without a value
	for _, d := range decls {
		if set[d.Index] || metal.TestsDefined(src, d.Name) {
			continue
		}
		if reached == nil {
			reached = csrc.NamesReached(src, notEntry)
		}
		if !reached[d.Name] {
			out = append(out, metal.ConstantValue{Name: d.Name, Index: d.Index, Kind: d.Kind, Literal: "{}"})
		}
	}
	return out
}

// userEntry finds p.Entry's signature in src (metal.EntrySignature).
func userEntry(src string, p profiler.Program) (csrc.Signature, error) {
	sig, found, err := metal.EntrySignature(src, p.Entry)
	if err != nil {
		return sig, fmt.Errorf("%s: %w (found %v)", p.File, err, found)
	}
	return sig, nil
}

// UserCall is the emulator's call of a user kernel: each [[buffer(i)]]
// parameter from b[i] (a pointer to its bytes, or for a `constant T&` the
// value there: the scalar struct or the one scalar Run wrote at i), a
// `threadgroup T*` [[threadgroup(0)]] parameter from the group's memory of
// the dispatch's dynamic_tgm bytes, thread positions from the emulator's
// tg, tid, sg and lane.
func UserCall(sig csrc.Signature) (string, error) {
	var args []string
	for _, prm := range sig.Params {
		base := strings.TrimSpace(strings.NewReplacer("device", "", "constant", "", "*", "", "&", "").Replace(prm.Type))
		switch {
		case strings.HasPrefix(prm.Attr, "buffer("):
			var i int
			if _, err := fmt.Sscanf(prm.Attr, "buffer(%d)", &i); err != nil {
				return "", fmt.Errorf("%s: cannot read [[%s]]", prm.Name, prm.Attr)
			}
			switch {
			case strings.Contains(prm.Type, "&"):
				args = append(args, fmt.Sprintf("*(%s*)b[%d].data()", base, i))
			case len(prm.Extents) > 1: // `constant float m[2][3]` is a pointer to rows of 3
				args = append(args, fmt.Sprintf("(%s (*)[%s])b[%d].data()", base, strings.Join(prm.Extents[1:], "]["), i))
			default:
				args = append(args, fmt.Sprintf("(%s*)b[%d].data()", base, i))
			}
		case prm.Attr == "threadgroup(0)" && strings.Contains(prm.Type, "*"):
			// the group's memory of the dispatch's dynamic_tgm bytes
			args = append(args, fmt.Sprintf("emu_tgm<%s>()", strings.TrimSpace(strings.Replace(base, "threadgroup", "", 1))))
		default:
			vec := positionVector.MatchString(base)
			a, ok := positionArg(prm.Attr, vec)
			if !ok {
				return "", fmt.Errorf("the emulator cannot pass %s [[%s]]", prm.Name, prm.Attr)
			}
			if vec && base != "uint3" { // ushort3, uint2…: the lanes it has, in its type
				a = "emu_pos_as<" + base + ">(" + a + ")"
			}
			args = append(args, a)
		}
	}
	return fmt.Sprintf("%s(%s);", sig.Entry, strings.Join(args, ", ")), nil
}

// positionVector is a vector type a thread-position parameter may have
// (uint3, ushort3, uint2, ushort2).
var positionVector = regexp.MustCompile(`^u?(?:int|short)[23]$`)

// positionArg is the emulator's value of a thread-position attribute, as
// a uint3 or as its x (a scalar parameter): tg, tid, sg, lane, nt and
// gdim (threads per group), ngroups (groups per grid) are what main and
// its dispatch lambda have.
func positionArg(attr string, vec bool) (string, bool) {
	both := map[string][2]string{
		"threadgroup_position_in_grid":   {"tg", "tg.x"},
		"thread_position_in_threadgroup": {"emu_pos(tid, gdim)", "tid"},
		"thread_position_in_grid":        {"emu_grid_pos(tg, tid, gdim)", "tg.x * gdim.x + tid"},
		"threads_per_threadgroup":        {"gdim", "nt"},
		"threadgroups_per_grid":          {"ngroups", "gx"},
		"grid_size":                      {"uint3{gx * gdim.x, gy * gdim.y, gz * gdim.z}", "gx * gdim.x"},
		"threads_per_grid":               {"uint3{gx * gdim.x, gy * gdim.y, gz * gdim.z}", "gx * gdim.x"},
	}
	if v, ok := both[attr]; ok {
		if vec {
			return v[0], true
		}
		return v[1], true
	}
	scalar := map[string]string{
		"thread_index_in_threadgroup":    "tid",
		"simdgroup_index_in_threadgroup": "sg",
		"thread_index_in_simdgroup":      "lane",
		"threads_per_simdgroup":          "32u",
		"thread_execution_width":         "32u",
		"simdgroups_per_threadgroup":     "(nt + 31) / 32",
	}
	v, ok := scalar[attr]
	return v, ok && !vec
}

// build compiles full with the emulator's main calling call, and a
// built-in kernel's knob macros (defineLines). The emulated metal_stdlib
// is always included first, as Apple's compiler needs no #include for
// the language's own types, functions and address spaces (a user source
// may include it only in a header, after it has used `constant`); a
// source's own #include of it is then a no-op.
func (e *Backend) build(full, call string, macros [][2]string, source, key string) (profiler.Kernel, error) {
	full = forEmulation(full, call)
	defs, err := defineLines(macros)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	e.n++
	cc := filepath.Join(e.dir, fmt.Sprintf("k%d.cc", e.n))
	bin := filepath.Join(e.dir, fmt.Sprintf("k%d", e.n))
	if err := os.WriteFile(cc, []byte(defs+full+strings.Replace(emuMain, "CALL", call, 1)), 0o644); err != nil {
		return nil, err
	}
	plain := func() (string, error) { return e.shim, nil }
	out, _, err := gxxEmulated(e.command, e.gxx, e.src, e.NativeBF16, plain, e.stopped, "-o", bin, cc)
	if err != nil {
		if err := e.stopped(); err != nil {
			return nil, fmt.Errorf("g++ stopped: %w", err)
		}
		return nil, fmt.Errorf("g++ %s %v: %v\n%s", source, macros, err, out)
	}
	e.bins[key] = bin
	return kernel{bin}, nil
}

// Run passes each launch's buffers and scalars to its binary through files.
func (e *Backend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		if l.Dispatch.Zero != "" {
			clear(l.Zero.(*profiler.HostBuffer).B)
			continue
		}
		d := l.Dispatch
		run := filepath.Join(e.dir, "run")
		if err := os.MkdirAll(run, 0o755); err != nil {
			return err
		}
		slots, user := e.slots[l.Kernel.(kernel).bin]
		if !user {
			slots = nil // a built-in kernel: buffers 0…n-1, the scalar struct at n
		}
		bind, err := metal.Bind(slots, len(l.Args), d.Scalars)
		if err != nil {
			return fmt.Errorf("dispatch %s: %w", d.Name, err)
		}
		// A buffer bound at several indices is one memory there, as on
		// Metal: its lowest index gets the file, the others an alias of it
		// (bufI.alias), so the kernel sees one address and its writes
		// through either name land in the one buffer.
		owner := map[*profiler.HostBuffer]int{}
		for i, a := range l.Args {
			if o, ok := owner[a.(*profiler.HostBuffer)]; !ok || bind.Buffers[i] < o {
				owner[a.(*profiler.HostBuffer)] = bind.Buffers[i]
			}
		}
		files := map[int][]byte{}
		aliases := map[int]int{}
		for i, a := range l.Args {
			if o := owner[a.(*profiler.HostBuffer)]; o == bind.Buffers[i] {
				files[o] = a.(*profiler.HostBuffer).B
			} else {
				aliases[bind.Buffers[i]] = o
			}
		}
		for _, bb := range bind.Bytes {
			files[bb.Index] = bb.Bytes
		}
		nb := 0
		for idx := range files {
			nb = max(nb, idx+1)
		}
		for idx := range aliases {
			nb = max(nb, idx+1)
		}
		for idx := range nb {
			alias := filepath.Join(run, fmt.Sprintf("buf%d.alias", idx))
			if o, ok := aliases[idx]; ok {
				if err := os.WriteFile(alias, []byte(fmt.Sprint(o)), 0o644); err != nil {
					return err
				}
				continue
			}
			if err := os.Remove(alias); err != nil && !os.IsNotExist(err) {
				return err
			}
			if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", idx)), files[idx], 0o644); err != nil {
				return err
			}
		}
		sc, err := metal.PackScalars(d.Scalars)
		if err != nil && !user {
			return err
		}
		if err := os.WriteFile(filepath.Join(run, "scalars.bin"), sc, 0o644); err != nil {
			return err
		}
		cmd := e.command(l.Kernel.(kernel).bin, run, fmt.Sprint(d.Grid[0]), fmt.Sprint(d.Grid[1]), fmt.Sprint(d.Grid[2]), fmt.Sprint(d.Threads()), fmt.Sprint(nb),
			fmt.Sprint(d.Group[0]), fmt.Sprint(d.Group[1]), fmt.Sprint(d.Group[2]), fmt.Sprint(d.DynamicTGM))
		if out, err := cmd.CombinedOutput(); err != nil {
			if err := e.stopped(); err != nil {
				return fmt.Errorf("emulated %s stopped: %w", d.Name, err)
			}
			return fmt.Errorf("emulated %s: %v\n%s", d.Name, err, out)
		}
		for _, a := range l.Args {
			b, err := os.ReadFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", owner[a.(*profiler.HostBuffer)])))
			if err != nil {
				return err
			}
			copy(a.(*profiler.HostBuffer).B, b)
		}
	}
	return nil
}

// Time runs the launches reps times (profiler.EmulatedTiming): timing is
// not what this backend is for.
func (e *Backend) Time(ls []profiler.Launch, reps int, mode profiler.CacheMode) (profiler.Timing, error) {
	return profiler.EmulatedTiming(ls, reps, mode, e.Run)
}

func (e *Backend) Occupancy(l profiler.Launch) profiler.Occupancy {
	return metal.Occupancy(e.dev, l.Dispatch, profiler.KernelAttrs{})
}

// Close removes the folder of an Open'd Backend (binaries and buffers).
func (e *Backend) Close() error {
	if e.ownsDir {
		return os.RemoveAll(e.dir)
	}
	return nil
}
