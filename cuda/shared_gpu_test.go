//go:build linux

package cuda

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// staticAndDynamic declares a static array and an extern one, and fills
// every byte of the extern one: the launch must give it all of its bytes.
const staticAndDynamic = `extern "C" __global__ void fill(float* out, int n) {
	__shared__ float fixed[64];
	extern __shared__ float dyn[];
	fixed[threadIdx.x % 64] = 1.0f;
	for (int i = threadIdx.x; i < n; i += blockDim.x) dyn[i] = (float)i;
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = dyn[i] + fixed[i % 64];
}
`

// A kernel with static and dynamic shared memory, whose plan lists both as
// TGM items and leaves dynamic_tgm at 0, gets the extern array's bytes in
// full as dynamic memory. Where the driver counted the system's reserved
// KiB in the static size (sm_90), the launch gave 1 KiB too little and the
// last writes fell outside the block's shared memory.
func TestStaticAndDynamicSharedOnGPU(t *testing.T) {
	b := openOrSkip(t)
	const n = 4096 // 16 KiB of extern shared memory
	p := profiler.Program{Source: "fill", File: "fill.cu", Code: staticAndDynamic, Entry: "fill"}
	k, err := b.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("static shared of the kernel: %d B (the user's arrays: 256 B)", k.Attrs().StaticTGM)
	if got := k.Attrs().StaticTGM; got != 256 {
		t.Errorf("static shared %d B, want the 256 B of fixed[64]", got)
	}
	buf, err := b.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(buf)
	nArg, err := profiler.ScalarOf(profiler.ScalarI32, "n", n)
	if err != nil {
		t.Fatal(err)
	}
	d := &profiler.Dispatch{Name: "fill", Grid: [3]int{1, 1, 1}, Group: [3]int{256, 1, 1}, Args: []string{"out"}, Scalars: []profiler.Scalar{nArg},
		TGM: []profiler.TGMItem{{Name: "fixed", Bytes: 256}, {Name: "dyn", Bytes: 4 * n}}}
	if err := b.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf}}}); err != nil {
		t.Fatalf("launch with %d B of TGM items: %v", d.TGMBytes(), err)
	}
	raw := make([]byte, 4*n)
	if err := b.Download(buf, raw); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != float32(i)+1 {
			t.Fatalf("out[%d] = %g, want %d", i, got, i+1)
		}
	}
}
