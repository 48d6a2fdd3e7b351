package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A dispatch's dynamic_tgm is a budget line of its own beside the tgm:
// items: the budget total (what the TUI, `mltop run` and the CSV's
// tgm_bytes show) counts it, and the limit holds the sum. Over the limit,
// the error says what to lower: dynamic_tgm, the items, and the knobs
// they read, never "the tiles" of a built-in family.
func TestDynamicTGMInBudget(t *testing.T) {
	const dispatch = "{entry: k, grid: [rows], threads: [WG], args: [X, Y, rows, cols]}"
	for _, c := range []struct {
		name, extra string
		wg          int
		want        map[string]int // budget items
		total       int
		err         []string
		errLacks    string
	}{
		{"no tgm", "", 64, map[string]int{}, 0, nil, ""},
		{"items only", `, tgm: [{name: part, bytes: "WG * 4"}]`, 64, map[string]int{"part": 256}, 256, nil, ""},
		{"dynamic only", `, dynamic_tgm: "WG * 4"`, 128, map[string]int{"dynamic": 512}, 512, nil, ""},
		{"dynamic zero", `, dynamic_tgm: "0"`, 64, map[string]int{}, 0, nil, ""},
		{"items and dynamic", `, tgm: [{name: part, bytes: "64"}], dynamic_tgm: "WG * 4"`, 64, map[string]int{"part": 64, "dynamic": 256}, 320, nil, ""},
		{"dynamic over", `, dynamic_tgm: "WG * 1000"`, 64, nil, 0,
			[]string{"threadgroup memory 64000 B (dynamic 64000 B)", "over test GPU's 49152 B per group", "lower dynamic_tgm 'WG * 1000', or what it depends on (WG=64)"}, "tiles"},
		{"sum over, each under", `, tgm: [{name: part, bytes: "30000"}], dynamic_tgm: "WG * 400"`, 64, nil, 0,
			[]string{"threadgroup memory 55600 B (part 30000 B + dynamic 25600 B)", "lower the tgm: items' bytes or dynamic_tgm 'WG * 400', or what they depend on (WG=64)"}, "tiles"},
		{"items over", `, tgm: [{name: part, bytes: "cols * 4000"}]`, 64, nil, 0,
			[]string{"(part 64000 B)", "lower the tgm: items' bytes, or what it depends on (cols=16)"}, "dynamic"},
		{"dynamic negative", `, dynamic_tgm: "WG - 100"`, 64, nil, 0, []string{"dynamic_tgm 'WG - 100'", "is -36 bytes for WG=64"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(goodYAML, dispatch, strings.TrimSuffix(dispatch, "}")+c.extra+"}", 1)
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
			if err != nil {
				t.Fatal(err)
			}
			dev := cudaDev
			dev.TGMPerGroupOptIn = 0 // the 48 KiB limit, so that small figures go over it
			s := profiler.Spec{Kernel: f.Name(), Knobs: map[string]int{"WG": c.wg}}.WithDefaults(f.Schema())
			p, err := f.Plan(s, dev)
			if c.err != nil {
				errorSays(t, err, c.err)
				if c.errLacks != "" && strings.Contains(err.Error(), c.errLacks) {
					t.Errorf("error %q says %q", err, c.errLacks)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := &p.Dispatches[0]
			b := run.BuildBudget(d, dev, profiler.KernelAttrs{})
			got := map[string]int{}
			for _, it := range b.Items {
				got[it.Name] = it.Bytes
			}
			if len(got) != len(c.want) || b.Total != c.total {
				t.Errorf("budget items %v total %d, want %v total %d", got, b.Total, c.want, c.total)
			}
			for n, v := range c.want {
				if got[n] != v {
					t.Errorf("item %s is %d B, want %d", n, got[n], v)
				}
			}
			if want := c.want["dynamic"]; d.DynamicTGM != want {
				t.Errorf("DynamicTGM %d, want %d (the launch's dynamic shared memory)", d.DynamicTGM, want)
			}
		})
	}
}
