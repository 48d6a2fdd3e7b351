package kernels_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

var bwdMetalDev = profiler.DeviceInfo{Backend: "metal", Name: "Apple M3 Max (test)", TGMPerGroup: 32768, TGMPerUnit: 32768, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 32}

// bwdMetalSpecs cover every program of the three families (the masked
// Setup and the cast included).
var bwdMetalSpecs = []profiler.Spec{
	{Kernel: "attn_bwd_atomic", DType: profiler.F16, Knobs: map[string]int{"BQ": 16, "BK": 16, "WM": 1, "WN": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true, "mask": true}},
	{Kernel: "attn_bwd", DType: profiler.F16, Knobs: map[string]int{"BQ_dq": 16, "BK_dq": 16, "WM_dq": 2, "BQ_dkv": 16, "BK_dkv": 16, "WM_dkv": 2},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 40, "Lk": 24, "D": 64}, Flags: map[string]bool{"causal": true, "alias": true}},
	{Kernel: "attn_bwd_unfused", DType: profiler.F32, Knobs: map[string]int{"BM": 16, "BN": 32},
		Dims: map[string]int{"B": 1, "H": 2, "Hkv": 1, "Lq": 24, "Lk": 40, "D": 64}, Flags: map[string]bool{"causal": true}},
}

// The embedded Metal sources define each entry point, bind every Arg and
// the scalar struct at the Plan's indices, declare the scalars in order, and
// use every macro the Plan passes.
func TestAttnBwdMetalSourcesMatchPlans(t *testing.T) {
	hdrs, err := shaders.Headers("metal")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, s := range bwdMetalSpecs {
		f, full, err := profiler.Resolve(s, bwdMetalDev)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := f.Plan(full, bwdMetalDev)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range append(plan.Setup, plan.Dispatches...) {
			if d.Zero != "" || d.Program.Source == "attn_fwd" {
				continue
			}
			key := d.Program.Source + fmt.Sprint(d.Program.Macros)
			if checked[key] {
				continue
			}
			checked[key] = true
			src, err := shaders.Source("metal", d.Program.Source, ".metal")
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`\]\]\s*void\s+` + d.Program.Entry + `\(`).MatchString(src) {
				t.Errorf("%s.metal has no kernel %s", d.Program.Source, d.Program.Entry)
			}
			full := metal.AssembleSource(hdrs[metal.CommonHeader], src)
			for _, m := range d.Program.Macros {
				// Used beyond its own #ifndef default.
				uses := regexp.MustCompile(`\b`+m.Name+`\b`).FindAllStringIndex(full, -1)
				defs := regexp.MustCompile(`#(ifndef|define) `+m.Name+`\b`).FindAllStringIndex(full, -1)
				if len(uses) <= len(defs) {
					t.Errorf("%s.metal never uses macro %s", d.Program.Source, m.Name)
				}
			}
			for i := 0; i <= len(d.Args); i++ {
				if !strings.Contains(src, fmt.Sprintf("[[buffer(%d)]]", i)) {
					t.Errorf("%s.metal binds nothing at buffer(%d)", d.Program.Source, i)
				}
			}
			if strings.Contains(src, fmt.Sprintf("[[buffer(%d)]]", len(d.Args)+1)) {
				t.Errorf("%s.metal binds a buffer past the scalars", d.Program.Source)
			}
			st := regexp.MustCompile(`struct \w+ \{([^}]*)\}`).FindStringSubmatch(src)
			if st == nil {
				t.Fatalf("%s.metal has no scalar struct", d.Program.Source)
			}
			var fields []string
			for _, l := range strings.Split(st[1], ";") {
				if f := strings.Fields(l); len(f) == 2 {
					fields = append(fields, f[0]+" "+f[1])
				}
			}
			var want []string
			for _, sc := range d.Scalars {
				want = append(want, map[profiler.ScalarKind]string{profiler.ScalarI32: "int", profiler.ScalarF32: "float"}[sc.Kind]+" "+sc.Name)
			}
			if strings.Join(fields, ";") != strings.Join(want, ";") {
				t.Errorf("%s scalar struct %v, plan scalars %v", d.Program.Source, fields, want)
			}
			// The TGM items the plan lists are the arrays the kernel declares.
			for _, it := range d.TGM {
				if !strings.Contains(src, it.Name) {
					t.Errorf("%s.metal never declares %s (a TGM item of the plan)", d.Program.Source, it.Name)
				}
			}
		}
	}
	if len(checked) < 9 {
		t.Errorf("checked %d programs, want every backward program", len(checked))
	}
}

// The emulator adds what the backward kernels use beyond the forward's
// subset of MSL: exp2, simd_max, simd_shuffle and device atomic_float.
const bwdEmuPrelude = `
namespace metal { using std::exp2; }
enum emu_memory_order { memory_order_relaxed };
struct atomic_float { float v; };
inline float atomic_fetch_add_explicit(atomic_float* a, float x, emu_memory_order) {
  unsigned int* p = reinterpret_cast<unsigned int*>(&a->v);
  unsigned int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  for (;;) {
    float f;
    std::memcpy(&f, &old, 4);
    const float g = f + x;
    unsigned int nw;
    std::memcpy(&nw, &g, 4);
    if (__atomic_compare_exchange_n(p, &old, nw, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return f;
  }
}
inline float simd_max(float v) {
  EmuSimd& s = *emu.simd;
  s.xch[emu.lane] = v;
  s.bar.arrive_and_wait();
  float r = s.xch[0];
  for (int i = 1; i < 32; i++) r = std::max(r, s.xch[i]);
  s.bar.arrive_and_wait();
  return r;
}
inline float simd_shuffle(float v, ushort src) {
  EmuSimd& s = *emu.simd;
  s.xch[emu.lane] = v;
  s.bar.arrive_and_wait();
  const float r = s.xch[src];
  s.bar.arrive_and_wait();
  return r;
}
`

const bwdEmuMain = `
#include <cstdio>
#include <string>
static std::vector<char> emu_read(const std::string& p) {
  std::vector<char> v;
  FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) { std::perror(p.c_str()); std::exit(2); }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + n);
  std::fclose(f);
  v.resize(v.size() + 64);
  return v;
}
int main(int argc, char** argv) {
  const std::string dir = argv[1];
  const uint gx = std::atoi(argv[2]), gy = std::atoi(argv[3]), gz = std::atoi(argv[4]), nt = std::atoi(argv[5]);
  const int nb = std::atoi(argv[6]);
  std::vector<std::vector<char>> b;
  std::vector<size_t> sizes;
  for (int i = 0; i < nb; i++) {
    b.push_back(emu_read(dir + "/buf" + std::to_string(i) + ".bin"));
    sizes.push_back(b.back().size() - 64);
  }
  std::vector<char> sc = emu_read(dir + "/scalars.bin");
  emu_dispatch(gx, gy, gz, nt, [&](uint3 tg, uint tid, ushort sg, ushort lane) { CALL });
  for (int i = 0; i < nb; i++) {
    FILE* f = std::fopen((dir + "/buf" + std::to_string(i) + ".bin").c_str(), "wb");
    std::fwrite(b[i].data(), 1, sizes[i], f);
    std::fclose(f);
  }
  return 0;
}
`

func bufArg(i int, typ string) string { return fmt.Sprintf("(%s*)b[%d].data()", typ, i) }

// bwdEmuCalls invoke each entry point with the Plan's buffers and scalars.
var bwdEmuCalls = map[string]string{
	"attn_fwd":        `attn_fwd((const mltop_t*)b[0].data(), (const mltop_t*)b[1].data(), (const mltop_t*)b[2].data(), (mltop_t*)b[3].data(), (float*)b[4].data(), *(AttnParams*)sc.data(), tg, tid, sg, lane);`,
	"attn_bwd_atomic": `attn_bwd_atomic(` + args("mltop_t", "mltop_t", "mltop_t", "mltop_t", "float", "mltop_t", "float", "mltop_t", "float", "float") + `, *(BwdParams*)sc.data(), tg, tid, sg, lane);`,
	"attn_bwd_cast":   `attn_bwd_cast(` + args("float", "float", "mltop_t", "mltop_t") + `, *(CastParams*)sc.data(), tg, tid);`,
	"attn_bwd_delta":  `attn_bwd_delta(` + args("mltop_t", "mltop_t", "float") + `, *(BwdParams*)sc.data(), tg, sg, lane);`,
	"attn_bwd_prep":   `attn_bwd_prep(` + args("mltop_t", "mltop_t", "mltop_t", "float", "mltop_t", "float") + `, *(BwdParams*)sc.data(), tg, sg, lane);`,
	"attn_bwd_dq":     `attn_bwd_dq(` + args("mltop_t", "mltop_t", "mltop_t", "mltop_t", "float", "float", "mltop_t") + `, *(BwdParams*)sc.data(), tg, tid, sg, lane);`,
	"attn_bwd_dkv":    `attn_bwd_dkv(` + args("mltop_t", "mltop_t", "mltop_t", "mltop_t", "float", "float", "mltop_t", "mltop_t") + `, *(BwdParams*)sc.data(), tg, tid, sg, lane);`,
	"attn_bwd_mm":     `attn_bwd_mm(` + args("mltop_t", "mltop_t", "mltop_t", "mltop_t", "float", "float", "float", "float", "mltop_t", "mltop_t", "mltop_t") + `, *(BwdParams*)sc.data(), tg, tid);`,
}

func args(types ...string) string {
	var out []string
	for i, t := range types {
		out = append(out, bufArg(i, t))
	}
	return strings.Join(out, ", ")
}

// bwdEmu is a profiler.Backend that compiles the Metal sources with g++
// against the CPU emulation of MSL in metal/testdata/mslemu.
type bwdEmu struct {
	gxx, shim, dir string
	bins           map[string]string
	n              int
}

type bwdEmuKernel struct{ bin string }

func (bwdEmuKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{} }

type bwdEmuBuf struct{ b []byte }

func (b *bwdEmuBuf) Size() int64 { return int64(len(b.b)) }

func (e *bwdEmu) Info() profiler.DeviceInfo { return bwdMetalDev }

func (e *bwdEmu) Compile(p profiler.Program) (profiler.Kernel, error) {
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
	key := p.Source + fmt.Sprint(macros)
	if bin, ok := e.bins[key]; ok {
		return bwdEmuKernel{bin}, nil
	}
	call, ok := bwdEmuCalls[p.Entry]
	if !ok {
		return nil, fmt.Errorf("no emulator call for %s", p.Entry)
	}
	full := metal.AssembleSource(hdrs[metal.CommonHeader]+bwdEmuPrelude, src)
	full = regexp.MustCompile(`(?m)^(\s*)threadgroup (\w+ \w+\[)`).ReplaceAllString(full, "${1}static $2")
	e.n++
	cc := filepath.Join(e.dir, fmt.Sprintf("k%d.cc", e.n))
	bin := filepath.Join(e.dir, fmt.Sprintf("k%d", e.n))
	if err := os.WriteFile(cc, []byte(full+strings.Replace(bwdEmuMain, "CALL", call, 1)), 0o644); err != nil {
		return nil, err
	}
	cargs := []string{"-std=c++20", "-O1", "-pthread", "-w", "-I", e.shim}
	for _, m := range macros {
		cargs = append(cargs, "-D"+m[0]+"="+m[1])
	}
	cargs = append(cargs, "-o", bin, cc)
	if out, err := exec.Command(e.gxx, cargs...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("g++ %s %v: %v\n%s", p.Source, macros, err, out)
	}
	e.bins[key] = bin
	return bwdEmuKernel{bin}, nil
}

func (e *bwdEmu) Alloc(n int64) (profiler.Buffer, error) { return &bwdEmuBuf{make([]byte, n)}, nil }
func (e *bwdEmu) Free(profiler.Buffer)                   {}
func (e *bwdEmu) Upload(b profiler.Buffer, src []byte) error {
	copy(b.(*bwdEmuBuf).b, src)
	return nil
}
func (e *bwdEmu) Download(b profiler.Buffer, dst []byte) error {
	copy(dst, b.(*bwdEmuBuf).b)
	return nil
}

func (e *bwdEmu) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		if l.Dispatch.Zero != "" {
			clear(l.Zero.(*bwdEmuBuf).b)
			continue
		}
		d := l.Dispatch
		run := filepath.Join(e.dir, "run")
		if err := os.MkdirAll(run, 0o755); err != nil {
			return err
		}
		for i, a := range l.Args {
			if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)), a.(*bwdEmuBuf).b, 0o644); err != nil {
				return err
			}
		}
		sc, err := metal.PackScalars(d.Scalars)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(run, "scalars.bin"), sc, 0o644); err != nil {
			return err
		}
		cmd := exec.Command(l.Kernel.(bwdEmuKernel).bin, run, fmt.Sprint(d.Grid[0]), fmt.Sprint(d.Grid[1]), fmt.Sprint(d.Grid[2]), fmt.Sprint(d.Threads()), fmt.Sprint(len(l.Args)))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("emulated %s: %v\n%s", d.Name, err, out)
		}
		for i, a := range l.Args {
			b, err := os.ReadFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)))
			if err != nil {
				return err
			}
			copy(a.(*bwdEmuBuf).b, b)
		}
	}
	return nil
}

func (e *bwdEmu) Time(ls []profiler.Launch, reps int, cold bool) (profiler.Timing, error) {
	t := profiler.Timing{Timer: "emulated"}
	for range reps {
		t.Samples = append(t.Samples, make([]float64, len(ls)))
	}
	for _, s := range t.Samples {
		for i := range s {
			s[i] = 1e6
		}
	}
	return t, nil
}

func (e *bwdEmu) Occupancy(l profiler.Launch) profiler.Occupancy {
	return profiler.EstimateOccupancy(bwdMetalDev, l.Dispatch, profiler.KernelAttrs{})
}
func (e *bwdEmu) Close() error { return nil }

// The Metal kernels' text, compiled with g++ against the MSL emulation and
// run through the real Runner against the float64 reference. It proves the
// tile logic, masks, buffer order, scalar layout, atomics and aliasing; it
// cannot prove that the Metal compiler accepts the text.
func TestAttnBwdMetalKernelsOnCPUEmulator(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the MSL emulation test needs a C++20 compiler with _Float16")
	}
	if testing.Short() {
		t.Skip("-short: the emulation compiles a dozen kernels with g++")
	}
	shim, err := filepath.Abs("../metal/testdata/mslemu")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shim, "metal_stdlib")); err != nil {
		t.Skipf("the MSL emulation shim is missing: %v", err)
	}
	eb := &bwdEmu{gxx: gxx, shim: shim, dir: t.TempDir(), bins: map[string]string{}}
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 1, MinSamples: 1, MinTime: 1e-9, MaxTime: 1e-3}
	opt.Warmup = 1e-9
	opt.Hot = true
	opt.MaxRows = 4096
	r := profiler.NewRunner(eb)
	for _, s := range bwdMetalSpecs {
		t.Run(s.Kernel, func(t *testing.T) {
			res := r.Run(context.Background(), s, opt, nil)
			if res.Status != profiler.StatusOK || res.Verdict == nil || !res.Verdict.Pass {
				t.Fatalf("status %s: %s\nverdict %+v", res.Status, res.Error, res.Verdict)
			}
			t.Logf("max abs err %.3g over %d elements (%s)", res.Verdict.MaxAbsErr, res.Verdict.Checked, res.Verdict.Rows)
		})
	}
}

var _ = kernels.AttnBwdReference
