package scaffold

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
)

const gridSyncKernel = `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void twice(const float* x, float* y, int n) {
  cg::grid_group g = cg::this_grid();
  for (int i = g.thread_rank(); i < n; i += g.size()) y[i] = x[i];
  g.sync();
  for (int i = g.thread_rank(); i < n; i += g.size()) y[n - 1 - i] *= 2;
}
`

// TestScaffoldCooperative: a kernel that waits on a grid barrier gets
// `cooperative: true` and a grid capped at max_coresident, and the
// manifest loads; one with block barriers only gets neither.
func TestScaffoldCooperative(t *testing.T) {
	for _, c := range []struct {
		name, src string
		coop      bool
	}{
		{"grid barrier", gridSyncKernel, true},
		{"block barrier", strings.NewReplacer("cg::grid_group", "cg::thread_block", "this_grid", "this_thread_block").Replace(gridSyncKernel), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Manifest(Request{Name: "twice", SrcPath: "k.cu", Src: c.src})
			if err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(r.Text, "    cooperative: true   # line 6 g.sync() waits for every block") && strings.Contains(r.Text, "max_coresident)")
			if has != c.coop || strings.Contains(r.Text, "cooperative") != c.coop {
				t.Fatalf("cooperative %v, want %v:\n%s", has, c.coop, r.Text)
			}
			f, err := user.Load(usertest.Write(t, map[string]string{"kernel.yaml": r.Text, "k.cu": c.src}))
			if err != nil {
				t.Fatalf("the manifest does not load: %v\n%s", err, r.Text)
			}
			if got := f.DispatchInfos()[0].Cooperative; got != c.coop {
				t.Errorf("loaded Cooperative %v, want %v", got, c.coop)
			}
		})
	}
}
