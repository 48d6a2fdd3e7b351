package user

import (
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// coopSource is a grid-sync kernel: copy, a grid-wide barrier, then
// double what the whole grid copied.
const coopSource = `#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float* x, float* y, int n, int sms) {
  cg::grid_group g = cg::this_grid();
  for (int i = g.thread_rank(); i < n; i += g.size()) y[i] = x[i];
  g.sync();
  for (int i = g.thread_rank(); i < n; i += g.size()) y[n - 1 - i] *= 2;
}
`

const coopMetal = `#include <metal_stdlib>
kernel void k(device const float* x [[buffer(0)]], device float* y [[buffer(1)]], constant int& n [[buffer(2)]], constant int& sms [[buffer(3)]]) {}
`

const coopYAML = `name: coop_k
sources: {cuda: k.cu}
dtypes: [f32]
knobs: {WG: {values: [128, 256, 1024], default: 256}}
dims: {N: {default: 1048576}}
buffers:
  - {name: x, dtype: f32, shape: [N]}
  - {name: y, dtype: f32, shape: [N], out: true}
dispatches:
  - {entry: k, grid: ["min(cdiv(N, WG), max_coresident)"], threads: [WG], args: [x, y, N, sm_count], cooperative: true}
check: none
`

// h100 has an H100 SXM's SMs and per-SM limits.
var h100 = profiler.DeviceInfo{Backend: "cuda", Name: "H100", Units: 132, TGMPerGroup: 48 << 10, TGMPerGroupOptIn: 227 << 10, TGMPerUnit: 228 << 10,
	MaxThreadsPerGroup: 1024, MaxThreadsPerUnit: 2048, MaxGroupsPerUnit: 32}

func loadCoop(t *testing.T, yaml string, files map[string]string) (*Family, error) {
	t.Helper()
	all := map[string]string{"kernel.yaml": yaml, "k.cu": coopSource}
	for k, v := range files {
		all[k] = v
	}
	return Load(usertest.Write(t, all))
}

func planCoop(t *testing.T, f *Family, dev profiler.DeviceInfo, knobs map[string]int) (*profiler.Plan, error) {
	t.Helper()
	s := profiler.Spec{Kernel: f.Name(), Knobs: knobs}.WithDefaults(f.Schema())
	return f.Plan(s, dev)
}

// TestCooperativeKey: `cooperative: true` reaches the plan's dispatch;
// absent or false it does not; a value that is no bool, or a Metal-only
// manifest, is refused at load naming the key.
func TestCooperativeKey(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		files          map[string]string
		want           bool
		errs           []string
	}{
		{name: "true", want: true},
		{name: "false", from: "cooperative: true", to: "cooperative: false"},
		{name: "absent", from: ", cooperative: true", to: ""},
		{name: "not a bool", from: "cooperative: true", to: "cooperative: 3", errs: []string{"kernel.yaml:10:", "cooperative"}},
		{name: "a word", from: "cooperative: true", to: "cooperative: maybe", errs: []string{"kernel.yaml:10:", "cooperative"}},
		{name: "misspelt", from: "cooperative: true", to: "coperative: true", errs: []string{"coperative", "did you mean cooperative"}},
		{name: "metal only", from: "sources: {cuda: k.cu}", to: "sources: {metal: k.metal}", files: map[string]string{"k.metal": coopMetal},
			errs: []string{"dispatches[0].cooperative", "Metal has no grid-wide barrier"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := coopYAML
			if c.from != "" {
				if !strings.Contains(y, c.from) {
					t.Fatalf("%q not in the manifest", c.from)
				}
				y = strings.Replace(y, c.from, c.to, 1)
			}
			f, err := loadCoop(t, y, c.files)
			if c.errs != nil {
				errorSays(t, err, c.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := planCoop(t, f, h100, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Dispatches[0].Cooperative; got != c.want {
				t.Errorf("Cooperative = %v, want %v", got, c.want)
			}
			if got := f.DispatchInfos()[0].Cooperative; got != c.want {
				t.Errorf("DispatchInfo.Cooperative = %v, want %v", got, c.want)
			}
		})
	}
}

// TestCooperativeRefusedOnMetal: a manifest with both sources loads, and
// its cooperative dispatch is refused when planned for Metal.
func TestCooperativeRefusedOnMetal(t *testing.T) {
	y := strings.Replace(coopYAML, "sources: {cuda: k.cu}", "sources: {cuda: k.cu, metal: k.metal}", 1)
	f, err := loadCoop(t, y, map[string]string{"k.metal": coopMetal})
	if err != nil {
		t.Fatal(err)
	}
	_, err = planCoop(t, f, metalDev, nil)
	errorSays(t, err, []string{"dispatch k is `cooperative: true`", "Metal has no grid-wide barrier"})
	if _, err := planCoop(t, f, h100, nil); err != nil {
		t.Errorf("CUDA plan: %v", err)
	}
}

// TestDeviceValues: the grid and args read sm_count and max_coresident
// from the device (SMs × blocks per SM by threads and shared memory), a
// stand-in without one (and a plan note says so), and a name the manifest
// declares keeps its own value.
func TestDeviceValues(t *testing.T) {
	small := h100
	small.Units = 10
	for _, c := range []struct {
		name      string
		dev       profiler.DeviceInfo
		wg        int
		from, to  string
		grid, sms int
		standIn   bool
	}{
		{name: "H100 256 threads", dev: h100, wg: 256, grid: 132 * 8, sms: 132},
		{name: "H100 1024 threads", dev: h100, wg: 1024, grid: 132 * 2, sms: 132},
		{name: "10 SMs", dev: small, wg: 256, grid: 10 * 8, sms: 10},
		{name: "shared memory binds", dev: h100, wg: 128, from: "cooperative: true}", to: "cooperative: true, tgm: [{name: buf, bytes: 100000}]}", grid: 132 * 2, sms: 132},
		{name: "small N binds", dev: h100, wg: 256, from: "N: {default: 1048576}", to: "N: {default: 4096}", grid: 16, sms: 132},
		{name: "no device: stand-in", dev: profiler.DeviceInfo{Backend: "cuda", Name: "mltop check"}, wg: 256, grid: 132 * 8, sms: 132, standIn: true},
		{name: "cpu: stand-in", dev: profiler.DeviceInfo{Backend: "cpu", Name: "cpu", Units: 4}, wg: 256, grid: 132 * 8, sms: 132, standIn: true},
		{name: "a dim named sm_count wins", dev: h100, wg: 256, from: "N: {default: 1048576}}", to: "N: {default: 1048576}, sm_count: {default: 7}}", grid: 132 * 8, sms: 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := coopYAML
			if c.from != "" {
				if !strings.Contains(y, c.from) {
					t.Fatalf("%q not in the manifest", c.from)
				}
				y = strings.Replace(y, c.from, c.to, 1)
			}
			f, err := loadCoop(t, y, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := planCoop(t, f, c.dev, map[string]int{"WG": c.wg})
			if err != nil {
				t.Fatal(err)
			}
			d := p.Dispatches[0]
			if d.Grid != [3]int{c.grid, 1, 1} {
				t.Errorf("grid %v, want [%d 1 1]", d.Grid, c.grid)
			}
			if len(d.Scalars) != 2 || d.Scalars[1].I != int64(c.sms) {
				t.Errorf("scalars %+v, want sms=%d", d.Scalars, c.sms)
			}
			noted := slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "stand-in") })
			if noted != c.standIn {
				t.Errorf("stand-in note %v, want %v: %q", noted, c.standIn, p.Notes)
			}
		})
	}
}

// TestDeviceValuesOnlyInGridAndArgs: a buffer's shape cannot read them
// (the reference, which knows no device, evaluates shapes).
func TestDeviceValuesOnlyInGridAndArgs(t *testing.T) {
	y := strings.Replace(coopYAML, "shape: [N], out: true}", "shape: [N], out: true}\n  - {name: part, dtype: f32, shape: [sm_count], scratch: true}", 1)
	_, err := loadCoop(t, y, nil)
	errorSays(t, err, []string{"unknown name 'sm_count'", "buffers"})
}

func TestBlocksPerUnit(t *testing.T) {
	for _, c := range []struct {
		name            string
		dev             profiler.DeviceInfo
		threads, shared int
		want            int
	}{
		{"threads bind", h100, 256, 0, 8},
		{"threads round up to warps", h100, 200, 0, 2048 / 224},
		{"block limit binds", h100, 32, 0, 32},
		{"shared binds, with the reserve", h100, 128, 100000, (228 << 10) / (100000 + 1024)},
		{"one block does not fit", h100, 128, 300 << 10, 0},
		{"stand-in without a device", profiler.DeviceInfo{Backend: "cuda"}, 512, 0, 4},
		{"metal: no reserve", profiler.DeviceInfo{Backend: "metal", Units: 10, MaxThreadsPerUnit: 1024, TGMPerUnit: 64 << 10, MaxGroupsPerUnit: 24}, 256, 16 << 10, 4},
		{"no limits reported", profiler.DeviceInfo{Backend: "metal", Units: 10}, 256, 0, 1},
	} {
		if got := BlocksPerUnit(c.dev, c.threads, c.shared); got != c.want {
			t.Errorf("%s: BlocksPerUnit(%d threads, %d B) = %d, want %d", c.name, c.threads, c.shared, got, c.want)
		}
	}
}

func TestGridSyncs(t *testing.T) {
	for _, c := range []struct {
		name, code, entry string
		want              []GridSync
	}{
		{"grid_group variable", coopSource, "k", []GridSync{{Line: 6, Func: "k", Call: "g.sync()"}}},
		{"auto from this_grid", "__global__ void k(int* p) {\n  auto gg = this_grid();\n  gg.sync();\n}", "k<float, 4>", []GridSync{{Line: 3, Func: "k", Call: "gg.sync()"}}},
		{"this_grid().sync()", "__global__ void k() { cooperative_groups::this_grid().sync(); }", "ns::k", []GridSync{{Line: 1, Func: "k", Call: "this_grid().sync()"}}},
		{"cg::sync(grid)", "__global__ void k() {\n cg::grid_group grid = cg::this_grid();\n cg::sync(grid);\n}", "k", []GridSync{{Line: 3, Func: "k", Call: "cg::sync(grid)"}}},
		{"in a helper the entry calls", "__device__ void barrier(cg::grid_group& g) { g.sync(); }\n__global__ void k() { barrier(cg::this_grid()); }", "k", []GridSync{{Line: 1, Func: "barrier", Call: "g.sync()"}}},
		{"block sync only", "__global__ void k() {\n auto b = cg::this_thread_block();\n b.sync();\n __syncthreads();\n}", "k", nil},
		{"in a comment", "__global__ void k() {\n // this_grid().sync();\n}", "k", nil},
		{"in another kernel", "__global__ void other() { this_grid().sync(); }\n__global__ void k() {}", "k", nil},
		{"a member named grid", "__global__ void k(P p) { p.grid.sync(); }", "k", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := GridSyncs(c.code, c.entry)
			if !slices.Equal(got, c.want) {
				t.Errorf("GridSyncs = %+v, want %+v", got, c.want)
			}
		})
	}
}
