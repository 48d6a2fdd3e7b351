package metal

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// The Metal kernels' source text, compiled with g++ against a CPU
// emulation of the MSL subset they use (testdata/mslemu), driven through
// the real profiler.Runner: the family's Plan, this package's scalar
// packing and source assembly, the seeded inputs and the float64
// reference. It proves the tile logic, masks, buffer order, scalar layout
// and macros on Linux; it cannot prove the Metal compiler accepts the text
// or the hardware's fragment layout (see mltop_common.h).

// emuCalls invokes each kernel with the Plan's buffers and scalar struct.
var emuCalls = map[string]string{
	"attn_fwd":    `attn_fwd((const mltop_t*)b[0].data(), (const mltop_t*)b[1].data(), (const mltop_t*)b[2].data(), (mltop_t*)b[3].data(), (float*)b[4].data(), *(AttnParams*)sc.data(), tg, tid, sg, lane);`,
	"softmax_bwd": `softmax_bwd((const mltop_t*)b[0].data(), (const mltop_t*)b[1].data(), (mltop_t*)b[2].data(), *(SoftmaxBwdParams*)sc.data(), tg.x, tid, sg, lane);`,
}

const emuMain = `
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
  v.resize(v.size() + 64); // a scalar struct may be read whole
  return v;
}
int main(int argc, char** argv) {
  if (argc != 7) { std::fprintf(stderr, "usage: dir gx gy gz nt nbufs\n"); return 2; }
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

type emuBackend struct {
	t    *testing.T
	gxx  string
	shim string
	dir  string
	bins map[string]string
	n    int
	// nativeBF16 compiles with __HAVE_BFLOAT__ (Metal 3.1's bfloat branch).
	nativeBF16 bool
}

type emuKernel struct{ bin string }

func (emuKernel) Attrs() profiler.KernelAttrs { return profiler.KernelAttrs{} }

type emuBuf struct{ b []byte }

func (b *emuBuf) Size() int64 { return int64(len(b.b)) }

func (e *emuBackend) Info() profiler.DeviceInfo { return testDev }

func (e *emuBackend) Compile(p profiler.Program) (profiler.Kernel, error) {
	src, err := shaders.Source("metal", p.Source, ".metal")
	if err != nil {
		return nil, err
	}
	hdrs, err := shaders.Headers("metal")
	if err != nil {
		return nil, err
	}
	macros, err := MacroPairs(p.Macros)
	if err != nil {
		return nil, err
	}
	full := AssembleSource(hdrs[CommonHeader], src)
	key := CacheKey(full, p.Entry, CompileOptions{Macros: macros}) + fmt.Sprint(e.nativeBF16)
	if bin, ok := e.bins[key]; ok {
		return emuKernel{bin}, nil
	}
	call, ok := emuCalls[p.Entry]
	if !ok {
		return nil, fmt.Errorf("no emulator call for %s", p.Entry)
	}
	// Threadgroup arrays are shared by the group's threads: statics.
	full = regexp.MustCompile(`(?m)^(\s*)threadgroup (\w+ \w+\[)`).ReplaceAllString(full, "${1}static $2")
	e.n++
	cc := filepath.Join(e.dir, fmt.Sprintf("k%d.cc", e.n))
	bin := filepath.Join(e.dir, fmt.Sprintf("k%d", e.n))
	if err := os.WriteFile(cc, []byte(full+strings.Replace(emuMain, "CALL", call, 1)), 0o644); err != nil {
		return nil, err
	}
	args := []string{"-std=c++20", "-O1", "-pthread", "-w", "-I", e.shim}
	if e.nativeBF16 {
		args = append(args, "-D__HAVE_BFLOAT__=1")
	}
	for _, m := range macros {
		args = append(args, "-D"+m[0]+"="+m[1])
	}
	args = append(args, "-o", bin, cc)
	if out, err := exec.Command(e.gxx, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("g++ %v: %v\n%s", macros, err, out)
	}
	e.bins[key] = bin
	return emuKernel{bin}, nil
}

func (e *emuBackend) Alloc(n int64) (profiler.Buffer, error) { return &emuBuf{make([]byte, n)}, nil }
func (e *emuBackend) Free(profiler.Buffer)                   {}
func (e *emuBackend) Upload(b profiler.Buffer, src []byte) error {
	copy(b.(*emuBuf).b, src)
	return nil
}
func (e *emuBackend) Download(b profiler.Buffer, dst []byte) error {
	copy(dst, b.(*emuBuf).b)
	return nil
}

func (e *emuBackend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		if l.Dispatch.Zero != "" {
			clear(l.Zero.(*emuBuf).b)
			continue
		}
		d := l.Dispatch
		run := filepath.Join(e.dir, "run")
		if err := os.MkdirAll(run, 0o755); err != nil {
			return err
		}
		for i, a := range l.Args {
			if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)), a.(*emuBuf).b, 0o644); err != nil {
				return err
			}
		}
		sc, err := PackScalars(d.Scalars)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(run, "scalars.bin"), sc, 0o644); err != nil {
			return err
		}
		cmd := exec.Command(l.Kernel.(emuKernel).bin, run, fmt.Sprint(d.Grid[0]), fmt.Sprint(d.Grid[1]), fmt.Sprint(d.Grid[2]), fmt.Sprint(d.Threads()), fmt.Sprint(len(l.Args)))
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("emulated %s: %v\n%s", d.Name, err, out)
		}
		for i, a := range l.Args {
			b, err := os.ReadFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)))
			if err != nil {
				return err
			}
			copy(a.(*emuBuf).b, b)
		}
	}
	return nil
}

// Time is not what this backend is for: a constant sample ends measuring at once.
func (e *emuBackend) Time(ls []profiler.Launch, reps int, cold bool) (profiler.Timing, error) {
	t := profiler.Timing{Timer: "emulated"}
	for range reps {
		t.Samples = append(t.Samples, make([]float64, len(ls)))
		for i := range ls {
			t.Samples[len(t.Samples)-1][i] = 1e6
		}
	}
	return t, nil
}

func (e *emuBackend) Occupancy(l profiler.Launch) profiler.Occupancy {
	return Occupancy(testDev, l.Dispatch, profiler.KernelAttrs{})
}
func (e *emuBackend) Close() error { return nil }

func TestMetalKernelsOnCPUEmulator(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the MSL emulation test needs a C++20 compiler with _Float16")
	}
	shim, err := filepath.Abs("testdata/mslemu")
	if err != nil {
		t.Fatal(err)
	}
	// Reading the shim lets `go test`'s cache notice when it changes (g++
	// reads it outside the test's view).
	for _, f := range []string{"metal_stdlib", "metal_simdgroup", "metal_simdgroup_matrix"} {
		if _, err := os.ReadFile(filepath.Join(shim, f)); err != nil {
			t.Fatal(err)
		}
	}
	eb := &emuBackend{t: t, gxx: gxx, shim: shim, dir: t.TempDir(), bins: map[string]string{}}
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 1, MinSamples: 1, MinTime: 1e-9, MaxTime: 1e-3}
	opt.Warmup = 1e-9
	type tc struct {
		name   string
		spec   profiler.Spec
		native bool // bf16 through the __HAVE_BFLOAT__ branch
	}
	attn := func(dt profiler.DType, causal bool, bq, bk, wm, wn, lq, lk, d, h, hkv int) profiler.Spec {
		return profiler.Spec{Kernel: "attn_fwd", DType: dt,
			Knobs: map[string]int{"BQ": bq, "BK": bk, "WM": wm, "WN": wn},
			Dims:  map[string]int{"B": 1, "H": h, "Hkv": hkv, "Lq": lq, "Lk": lk, "D": d},
			Flags: map[string]bool{"causal": causal}}
	}
	cases := []tc{
		{"attn f32 GQA ragged WN=1", attn(profiler.F32, false, 16, 16, 2, 1, 40, 56, 64, 2, 1), false},
		{"attn f16 causal WN=2", attn(profiler.F16, true, 32, 16, 2, 2, 24, 40, 64, 2, 2), false},
		{"attn bf16 causal Lq>Lk masked rows D=96", attn(profiler.BF16, true, 16, 16, 1, 2, 40, 24, 96, 1, 1), false},
		{"attn bf16 native bfloat WN=2", attn(profiler.BF16, false, 16, 16, 2, 2, 33, 47, 64, 2, 1), true},
		{"attn f16 WN=4 D=128", attn(profiler.F16, false, 8, 32, 1, 4, 20, 70, 128, 3, 3), false},
		{"attn f32 WM=8 causal Lq>Lk", attn(profiler.F32, true, 64, 16, 8, 1, 70, 33, 64, 1, 1), false},
		{"softmax_bwd f32 WG=64", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 5, "cols": 300}}, false},
		{"softmax_bwd bf16 WG=256", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 3, "cols": 1000}}, false},
		{"softmax_bwd bf16 native WG=32", profiler.Spec{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 4, "cols": 77}}, true},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eb.nativeBF16 = c.native
			// A runner per case: its kernel cache does not know about nativeBF16.
			res := profiler.NewRunner(eb).Run(context.Background(), c.spec, opt, nil)
			if res.Status != profiler.StatusOK || res.Verdict == nil || !res.Verdict.Pass {
				t.Fatalf("status %s: %s\nverdict %+v", res.Status, res.Error, res.Verdict)
			}
			t.Logf("max abs err %.3g, max rel err %.3g over %d elements (%s)", res.Verdict.MaxAbsErr, res.Verdict.MaxRelErr, res.Verdict.Checked, res.Verdict.Rows)
		})
	}
}
