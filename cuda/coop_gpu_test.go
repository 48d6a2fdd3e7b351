//go:build linux

package cuda

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// gridSum writes one value per block, waits on the grid-wide barrier,
// then every block sums all blocks' values: each out[b] is the sum only if
// the barrier held every block until all had written.
const gridSum = `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void grid_sum(int* part, int* out) {
	cg::grid_group g = cg::this_grid();
	if (threadIdx.x == 0) part[blockIdx.x] = blockIdx.x + 1;
	g.sync();
	if (threadIdx.x == 0) {
		int s = 0;
		for (unsigned i = 0; i < gridDim.x; i++) s += part[i];
		out[blockIdx.x] = s;
	}
}
`

// TestCooperativeLaunchOnGPU runs a grid-sync kernel cooperatively over
// the whole co-resident grid (Run and Time), checks every block's sum,
// and checks that one block more is refused before launch.
func TestCooperativeLaunchOnGPU(t *testing.T) {
	b := openOrSkip(t)
	k, err := b.Compile(profiler.Program{Source: "grid_sum", File: "grid_sum.cu", Code: gridSum, Entry: "grid_sum"})
	if err != nil {
		t.Fatal(err)
	}
	d := &profiler.Dispatch{Name: "grid_sum", Grid: [3]int{1, 1, 1}, Group: [3]int{256, 1, 1}, Args: []string{"part", "out"}, Cooperative: true}
	occ := b.Occupancy(profiler.Launch{Dispatch: d, Kernel: k})
	if !occ.Available || occ.GroupsPerUnit < 1 {
		t.Fatalf("occupancy %+v", occ)
	}
	blocks := occ.GroupsPerUnit * b.Info().Units
	bufs := make([]profiler.Buffer, 2)
	for i := range bufs {
		if bufs[i], err = b.Alloc(int64(4 * (blocks + 1))); err != nil {
			t.Fatal(err)
		}
		defer b.Free(bufs[i])
	}
	d.Grid[0] = blocks
	ls := []profiler.Launch{{Dispatch: d, Kernel: k, Args: bufs}}
	if err := b.Run(ls); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*(blocks+1))
	if err := b.Download(bufs[1], raw); err != nil {
		t.Fatal(err)
	}
	want := int32(blocks * (blocks + 1) / 2)
	for i := range blocks {
		if got := int32(binary.LittleEndian.Uint32(raw[4*i:])); got != want {
			t.Fatalf("block %d of %d summed %d, want %d: the grid barrier did not hold", i, blocks, got, want)
		}
	}
	tm, err := b.Time(ls, 3, profiler.CacheHot)
	if err != nil || len(tm.Samples) != 3 {
		t.Fatalf("timing a cooperative launch: %v (%d samples)", err, len(tm.Samples))
	}
	d.Grid[0] = blocks + 1
	err = b.Run(ls)
	for _, w := range []string{"dispatch grid_sum is cooperative", fmt.Sprintf("%d blocks, more than the %d resident at once", blocks+1, blocks), fmt.Sprintf("× %d SMs", b.Info().Units), "max_coresident"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("one block too many: %v\nwant %q", err, w)
		}
	}
}
