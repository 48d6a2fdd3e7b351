//go:build linux

package cuda

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// userKernel includes the toolkit's headers as public code bases do, and
// its entry is a template in a namespace, not extern "C".
const userKernel = `#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <cub/warp/warp_reduce.cuh>
namespace tk {
template <typename T, int N>
__global__ void pack(double* out, signed char a, unsigned char b, short c, unsigned short d, int e,
                     unsigned int f, long long g, unsigned long long h, float i, double j, bool k) {
	namespace cg = cooperative_groups;
	cg::thread_block blk = cg::this_thread_block();
	using Reduce = cub::WarpReduce<int>;
	__shared__ typename Reduce::TempStorage tmp;
	int lanes = Reduce(tmp).Sum(1);
	if (blk.thread_rank() == 0) {
		out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f;
		out[6] = (double)g; out[7] = (double)h; out[8] = i; out[9] = j; out[10] = k ? 1 : 0;
		out[11] = (double)(float)(T(1.5f)) * N; out[12] = lanes;
	}
}
}
`

func TestUserKernelOnGPU(t *testing.T) {
	b := openOrSkip(t)
	p := profiler.Program{Source: "pack", File: "pack.cu", Code: userKernel, Entry: "tk::pack<__nv_bfloat16, 4>"}
	k, err := b.Compile(p)
	if err != nil {
		t.Fatalf("compile: %v\ntoolkit:\n%s", err, Toolkit())
	}
	mk := func(kind profiler.ScalarKind, name string, v any) profiler.Scalar {
		s, err := profiler.ScalarOf(kind, name, v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	scalars := []profiler.Scalar{
		mk(profiler.ScalarI8, "a", -5), mk(profiler.ScalarU8, "b", 250), mk(profiler.ScalarI16, "c", -30000),
		mk(profiler.ScalarU16, "d", 60000), mk(profiler.ScalarI32, "e", -2000000000), mk(profiler.ScalarU32, "f", 4000000000.0),
		mk(profiler.ScalarI64, "g", int64(-1)<<40), mk(profiler.ScalarU64, "h", uint64(1)<<50), mk(profiler.ScalarF32, "i", 0.25),
		mk(profiler.ScalarF64, "j", 1e300), mk(profiler.ScalarBool, "k", true),
	}
	want := []float64{-5, 250, -30000, 60000, -2000000000, 4000000000, -(1 << 40), 1 << 50, 0.25, 1e300, 1, 6, 32}
	buf, err := b.Alloc(int64(8 * len(want)))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(buf)
	d := &profiler.Dispatch{Name: "pack", Grid: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1}, Args: []string{"out"}, Scalars: scalars}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf}}}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 8*len(want))
	if err := b.Download(buf, raw); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])); got != w {
			t.Errorf("out[%d] (%s) = %g, want %g", i, append(scalars, profiler.Scalar{Name: "bf16×N"}, profiler.Scalar{Name: "lanes"})[i].Name, got, w)
		}
	}
	// The cubin's own facts agree with the driver's.
	r, err := CheckCompile(p, b.arch)
	if err != nil {
		t.Fatal(err)
	}
	// The kernel's static size is the user's arrays, whether or not the
	// driver counts what the compiler reserves in the kernel's shared
	// window (sm_90): userStaticShared takes that part off.
	if drv := k.Attrs().StaticTGM; drv != r.StaticShared {
		t.Errorf("cubin says %d B shared (+%d B reserved); the kernel's static size %d", r.StaticShared, r.ReservedShared, drv)
	}
	// An entry that is not there names itself and what is.
	p.Entry = "tk::pack"
	if _, err := b.Compile(p); err == nil || !strings.Contains(err.Error(), `has no kernel "tk::pack"`) || !strings.Contains(err.Error(), "kernels in pack.cu: tk::pack") {
		t.Errorf("missing template arguments: %v", err)
	}
	// A second backend over the cache finds the lowered name on disk.
	p.Entry = "tk::pack<__nv_bfloat16, 4>"
	b2, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	b2.(*backend).cache = newCubinCache(b.cache.dir)
	if _, err := b2.Compile(p); err != nil {
		t.Fatal(err)
	}
	if st := b2.(*backend).Stats(); st.DiskHits != 1 || st.Compiles != 0 {
		t.Errorf("second backend: %+v, want the entry from disk", st)
	}
}
