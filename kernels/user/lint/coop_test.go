package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

const gridSyncSource = `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void barrier(cg::grid_group& g) { g.sync(); }
__global__ void k(const T* X, T* Y, int rows, int cols) {
  auto grid = cg::this_grid();
  barrier(grid);
  cg::sync(grid);
}
`

// TestGridSyncWarning: a kernel that waits on a grid barrier in a
// dispatch without `cooperative: true` is warned about, naming each
// barrier's line and the key to add; with the key (or with no barrier, or
// a block barrier only) there is no such warning.
func TestGridSyncWarning(t *testing.T) {
	blockOnly := strings.NewReplacer("cg::grid_group& g", "cg::thread_block& g", "cg::this_grid()", "cg::this_thread_block()", "cg::sync(grid);", "").Replace(gridSyncSource)
	for _, c := range []struct {
		name, src, from, to string
		warn                bool
	}{
		{name: "plain launch", src: gridSyncSource, warn: true},
		{name: "cooperative", src: gridSyncSource, from: "args: [X, Y, rows, cols]}", to: "args: [X, Y, rows, cols], cooperative: true}"},
		{name: "cooperative false", src: gridSyncSource, from: "args: [X, Y, rows, cols]}", to: "args: [X, Y, rows, cols], cooperative: false}", warn: true},
		{name: "block barrier only", src: blockOnly},
		{name: "no barrier", src: usertest.Source},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := usertest.Manifest("grid_k")
			if c.from != "" {
				if !strings.Contains(m, c.from) {
					t.Fatalf("%q not in the manifest", c.from)
				}
				m = strings.Replace(m, c.from, c.to, 1)
			}
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": c.src})
			r := Check(path, Options{Static: true}).Manifests[0]
			text := findingsOf(r)
			if r.Broken() {
				t.Fatalf("broken:\n%s", text)
			}
			got := strings.Contains(text, "grid-wide barrier")
			if got != c.warn {
				t.Fatalf("warned %v, want %v:\n%s", got, c.warn, text)
			}
			if c.warn {
				mustContain(t, "grid sync", text, "warning [source] "+path+":14:",
					"dispatch k waits on a grid-wide barrier (k.cu:7 cg::sync(grid) (in k), k.cu:3 g.sync() (in barrier))",
					"add `cooperative: true` to dispatches[0]", "max_coresident")
			}
		})
	}
}

// TestStandInNote: a dispatch whose grid reads a device value gets a
// note that check used a stand-in device.
func TestStandInNote(t *testing.T) {
	m := strings.Replace(usertest.Manifest("sm_k"), "grid: [rows]", "grid: [\"min(rows, sm_count)\"]", 1)
	if m == usertest.Manifest("sm_k") {
		t.Fatal("grid not replaced")
	}
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source})
	text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
	mustContain(t, "stand-in", text, "note    [source] "+path+":14:", "dispatch k: sm_count and max_coresident are a stand-in here")
	path = usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("sm_k"), "k.cu": usertest.Source})
	if text := findingsOf(Check(path, Options{Static: true}).Manifests[0]); strings.Contains(text, "stand-in") {
		t.Errorf("a grid without device values noted:\n%s", text)
	}
}

// TestCooperativeGridOverCoresident: a cooperative dispatch whose grid
// has more blocks than the stand-in H100 holds at once (132 SMs × 32
// blocks of 64 threads = 4224) is warned about at each shape where it
// does, naming both numbers; a grid that fits, max_coresident itself, or a
// plain dispatch is not.
func TestCooperativeGridOverCoresident(t *testing.T) {
	const plain = "grid: [rows], threads: [WG], args: [X, Y, rows, cols]}"
	for _, c := range []struct {
		name, dispatch, rows string
		want                 []string // "" entries: no warning
	}{
		{"fits", "grid: [rows], threads: [WG], args: [X, Y, rows, cols], cooperative: true}", "8", nil},
		{"default shape over", "grid: [rows], threads: [WG], args: [X, Y, rows, cols], cooperative: true}", "8192",
			[]string{"dispatch k is `cooperative: true` but its grid has 8192 blocks at grid_k f32 WG=64 | cols=16 rows=8192, over the 4224 co-resident at once on the stand-in device (an H100's 132 SMs)", "refuses a cooperative launch"}},
		{"both shapes over", `grid: ["rows * 4096"], threads: [WG], args: [X, Y, rows, cols], cooperative: true}`, "8",
			[]string{"its grid has 8192 blocks at grid_k f32 WG=64 | cols=4 rows=2, over the 4224 co-resident at once; ", "; 32768 blocks at grid_k f32 WG=64 | cols=16 rows=8, over the 4224 co-resident at once on the stand-in"}},
		{"bigger blocks", `grid: [rows], threads: [1024], args: [X, Y, rows, cols], cooperative: true}`, "300",
			[]string{"300 blocks at grid_k f32 WG=64 | cols=16 rows=300, over the 264 co-resident"}},
		{"max_coresident", "grid: [max_coresident], threads: [WG], args: [X, Y, rows, cols], cooperative: true}", "8192", nil},
		{"plain launch", plain, "8192", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := strings.Replace(usertest.Manifest("grid_k"), plain, c.dispatch, 1)
			m = strings.Replace(m, "rows: {default: 8}", "rows: {default: "+c.rows+"}", 1)
			path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source})
			r := Check(path, noTools(t)).Manifests[0]
			text := findingsOf(r)
			if r.Broken() {
				t.Fatalf("broken:\n%s", text)
			}
			if c.want == nil {
				if strings.Contains(text, "co-resident") {
					t.Errorf("warned:\n%s", text)
				}
				return
			}
			mustContain(t, c.name, text, append([]string{"warning [plan] " + path + ":14:"}, c.want...)...)
		})
	}
}
