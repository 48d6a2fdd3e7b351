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

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// The Metal kernels of the seed families (sdpa_multi, gated_delta_chunk,
// rmsnorm_bwd, cross_entropy, embedding_bwd, transpose) compiled with g++
// against the CPU emulation of MSL in metal/testdata/mslemu and run
// through the real Runner against the float64 references. It proves the
// indexing, reductions, barriers, atomics, buffer order, scalar layout and
// macros; it cannot prove that the Metal compiler accepts the text.

var seedEmuDev = profiler.DeviceInfo{Backend: "metal", Name: "Apple M2 (emulated)", TGMPerGroup: 32768, TGMPerUnit: 32768, MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 1024, SIMDWidth: 32}

// seedEmuPrelude adds what these kernels use beyond the emulator's subset.
const seedEmuPrelude = `
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
enum seed_memory_order { memory_order_relaxed };
struct atomic_float { float v; };
inline float atomic_fetch_add_explicit(atomic_float* a, float x, seed_memory_order) {
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
`

const seedEmuMain = `
#include <cstdio>
#include <string>
static std::vector<char> seed_read(const std::string& p) {
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
    b.push_back(seed_read(dir + "/buf" + std::to_string(i) + ".bin"));
    sizes.push_back(b.back().size() - 64);
  }
  std::vector<char> sc = seed_read(dir + "/scalars.bin");
  emu_dispatch(gx, gy, gz, nt, [&](uint3 tg, uint tid, ushort sg, ushort lane) { CALL });
  for (int i = 0; i < nb; i++) {
    FILE* f = std::fopen((dir + "/buf" + std::to_string(i) + ".bin").c_str(), "wb");
    std::fwrite(b[i].data(), 1, sizes[i], f);
    std::fclose(f);
  }
  return 0;
}
`

func seedBufs(types ...string) string {
	var out []string
	for i, t := range types {
		out = append(out, fmt.Sprintf("(%s*)b[%d].data()", t, i))
	}
	return strings.Join(out, ", ")
}

// seedEmuCalls invoke each entry point with the Plan's buffers and scalars.
var seedEmuCalls = map[string]string{
	"transpose":         `transpose(` + seedBufs("const mltop_t", "mltop_t") + `, *(TransposeParams*)sc.data(), tg, tid);`,
	"rmsnorm_bwd":       `rmsnorm_bwd(` + seedBufs("const mltop_t", "const mltop_t", "const mltop_t", "mltop_t", "atomic_float") + `, *(RMSNormBwdParams*)sc.data(), tg.x, tid, sg, lane);`,
	"cross_entropy":     `cross_entropy(` + seedBufs("const mltop_t", "const int", "float", "mltop_t") + `, *(CrossEntropyParams*)sc.data(), tg.x, tid, sg, lane);`,
	"embedding_bwd":     `embedding_bwd(` + seedBufs("const int", "const mltop_t", "atomic_float") + `, *(EmbeddingBwdParams*)sc.data(), tg.x, tid);`,
	"sdpa_multi":        `sdpa_multi(` + seedBufs("const mltop_t", "const mltop_t", "const mltop_t", "mltop_t") + `, *(SDPAMultiParams*)sc.data(), tg, tid, sg, lane);`,
	"gated_delta_chunk": `gated_delta_chunk(` + seedBufs("const mltop_t", "const mltop_t", "const mltop_t", "const float", "const float", "mltop_t", "mltop_t", "float") + `, *(GatedDeltaParams*)sc.data(), tg, tid);`,
}

// seedEmu is a profiler.Backend over the g++-compiled emulation.
type seedEmu struct {
	gxx, shim, dir string
	bins           map[string]string
	n              int
}

type seedEmuKernel struct{ bin string }

func (seedEmuKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{} }

type seedEmuBuf struct{ b []byte }

func (b *seedEmuBuf) Size() int64 { return int64(len(b.b)) }

func (e *seedEmu) Info() profiler.DeviceInfo { return seedEmuDev }

func (e *seedEmu) Compile(p profiler.Program) (profiler.Kernel, error) {
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
		return seedEmuKernel{bin}, nil
	}
	call, ok := seedEmuCalls[p.Entry]
	if !ok {
		return nil, fmt.Errorf("no emulator call for %s", p.Entry)
	}
	full := metal.AssembleSource(hdrs[metal.CommonHeader]+seedEmuPrelude, src)
	// Threadgroup arrays become statics: groups run one after another.
	full = regexp.MustCompile(`(?m)^(\s*)threadgroup (\w+ \w+\[)`).ReplaceAllString(full, "${1}static $2")
	e.n++
	cc := filepath.Join(e.dir, fmt.Sprintf("k%d.cc", e.n))
	bin := filepath.Join(e.dir, fmt.Sprintf("k%d", e.n))
	if err := os.WriteFile(cc, []byte(full+strings.Replace(seedEmuMain, "CALL", call, 1)), 0o644); err != nil {
		return nil, err
	}
	args := []string{"-std=c++20", "-O1", "-pthread", "-w", "-I", e.shim}
	for _, m := range macros {
		args = append(args, "-D"+m[0]+"="+m[1])
	}
	args = append(args, "-o", bin, cc)
	if out, err := exec.Command(e.gxx, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("g++ %s %v: %v\n%s", p.Source, macros, err, out)
	}
	e.bins[key] = bin
	return seedEmuKernel{bin}, nil
}

func (e *seedEmu) Alloc(n int64) (profiler.Buffer, error) { return &seedEmuBuf{make([]byte, n)}, nil }
func (e *seedEmu) Free(profiler.Buffer)                   {}
func (e *seedEmu) Upload(b profiler.Buffer, src []byte) error {
	copy(b.(*seedEmuBuf).b, src)
	return nil
}
func (e *seedEmu) Download(b profiler.Buffer, dst []byte) error {
	copy(dst, b.(*seedEmuBuf).b)
	return nil
}

func (e *seedEmu) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		if l.Dispatch.Zero != "" {
			clear(l.Zero.(*seedEmuBuf).b)
			continue
		}
		d := l.Dispatch
		run := filepath.Join(e.dir, "run")
		if err := os.MkdirAll(run, 0o755); err != nil {
			return err
		}
		for i, a := range l.Args {
			if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)), a.(*seedEmuBuf).b, 0o644); err != nil {
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
		cmd := exec.Command(l.Kernel.(seedEmuKernel).bin, run, fmt.Sprint(d.Grid[0]), fmt.Sprint(d.Grid[1]), fmt.Sprint(d.Grid[2]), fmt.Sprint(d.Threads()), fmt.Sprint(len(l.Args)))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("emulated %s: %v\n%s", d.Name, err, out)
		}
		for i, a := range l.Args {
			b, err := os.ReadFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)))
			if err != nil {
				return err
			}
			copy(a.(*seedEmuBuf).b, b)
		}
	}
	return nil
}

// Time is not what this backend is for: a constant sample ends measuring at once.
func (e *seedEmu) Time(ls []profiler.Launch, reps int, cold bool) (profiler.Timing, error) {
	t := profiler.Timing{Timer: "emulated"}
	for range reps {
		s := make([]float64, len(ls))
		for i := range s {
			s[i] = 1e6
		}
		t.Samples = append(t.Samples, s)
	}
	return t, nil
}

func (e *seedEmu) Occupancy(l profiler.Launch) profiler.Occupancy {
	return profiler.EstimateOccupancy(seedEmuDev, l.Dispatch, profiler.KernelAttrs{})
}
func (e *seedEmu) Close() error { return nil }

func TestSeedMetalKernelsOnCPUEmulator(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the MSL emulation test needs a C++20 compiler with _Float16")
	}
	if testing.Short() {
		t.Skip("-short: the emulation compiles seven kernels with g++")
	}
	shim, err := filepath.Abs("../metal/testdata/mslemu")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shim, "metal_stdlib")); err != nil {
		t.Skipf("the MSL emulation shim is missing: %v", err)
	}
	specs := []profiler.Spec{
		{Kernel: "transpose", DType: profiler.F16, Knobs: map[string]int{"TILE": 16, "WG": 64}, Dims: map[string]int{"rows": 37, "cols": 50}},
		{Kernel: "rmsnorm_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 64, "VEC": 2, "RPG": 4, "RB": 4}, Dims: map[string]int{"rows": 10, "D": 200}},
		{Kernel: "cross_entropy", DType: profiler.F32, Knobs: map[string]int{"WG": 64, "VEC": 2}, Dims: map[string]int{"rows": 12, "vocab": 6, "pad_id": 1}},
		{Kernel: "cross_entropy", DType: profiler.BF16, Knobs: map[string]int{"WG": 32, "VEC": 4}, Dims: map[string]int{"rows": 3, "vocab": 500, "pad_id": -1}},
		{Kernel: "embedding_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 32, "VEC": 4, "TPG": 2}, Dims: map[string]int{"tokens": 9, "vocab": 3, "D": 40}},
		{Kernel: "sdpa_multi", DType: profiler.F16, Knobs: map[string]int{"TPG": 64}, Dims: map[string]int{"n_query": 3, "H": 2, "Hkv": 1, "D": 64, "base_kv": 5, "kv_stride": 9}, Flags: map[string]bool{"causal": true}},
		{Kernel: "gated_delta_chunk", DType: profiler.BF16, Knobs: map[string]int{"BT": 16, "BV": 8, "WG": 32}, Dims: map[string]int{"B": 1, "T": 32, "H": 2, "Hg": 1, "K": 32, "V": 16}},
	}
	eb := &seedEmu{gxx: gxx, shim: shim, dir: t.TempDir(), bins: map[string]string{}}
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 1, MinSamples: 1, MinTime: 1e-9, MaxTime: 1e-3}
	opt.Warmup = 1e-9
	opt.Hot = true
	opt.MaxRows = 4096
	r := profiler.NewRunner(eb)
	for _, s := range specs {
		t.Run(s.Kernel+"/"+string(s.DType), func(t *testing.T) {
			res := r.Run(context.Background(), s, opt, nil)
			if res.Status != profiler.StatusOK || res.Verdict == nil || !res.Verdict.Pass {
				t.Fatalf("status %s: %s\nverdict %+v", res.Status, res.Error, res.Verdict)
			}
			t.Logf("max abs err %.3g over %d elements (%s)", res.Verdict.MaxAbsErr, res.Verdict.Checked, res.Verdict.Rows)
		})
	}
}
