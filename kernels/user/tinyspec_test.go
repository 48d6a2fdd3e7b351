package user

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// TinySpec lowers a dim under a divisibility rule or a lower bound to the
// smallest value the rules allow, which the first 64 small values may not
// reach: N % WG == 0 with WG 256 lowers N to 256, not leave it at 1M.
func TestTinySpecObeysRules(t *testing.T) {
	for _, c := range []struct {
		name, dims, rules, want string
	}{
		{"modulo a knob", "  N: {default: 1048576}\n", `["N % WG == 0"]`, "N=256"},
		{"modulo a product", "  R: {default: 4}\n  N: {default: 1048576}\n", `["N % (R * WG) == 0"]`, "R=2 N=512"},
		{"modulo a product of dims", "  R: {default: 128, multiple: 64}\n  C: {default: 64, multiple: 32}\n  N: {default: 1048576}\n", `["N % (R * C) == 0"]`, "R=64 C=32 N=2048"},
		{"modulo two", "  N: {default: 3145728}\n", `["N % WG == 0", "N % 96 == 0"]`, "N=768"},
		{"modulo a literal", "  N: {default: 1000000}\n", `["N % 1000 == 0"]`, "N=1000"},
		{"modulo a source macro", "  N: {default: 1048576}\n", `["N % BLOCK_DIM == 0"]`, "N=1024"},
		{"at least a knob", "  N: {default: 1048576}\n", `["WG <= N"]`, "N=256"},
		{"at least twice a knob", "  N: {default: 1048576}\n", `["N >= 2 * WG"]`, "N=512"},
		{"at least a product of dims", "  R: {default: 16}\n  C: {default: 64, min: 40}\n  N: {default: 1048576}\n", `["N >= R * C"]`, "R=2 C=40 N=80"},
		{"modulo a product of three", "  N: {default: 1048576}\n", `["N % (2 * WG * 64) == 0"]`, "N=32768"},
		{"distinct multiples", "  M: {default: 1024, min: 128}\n  N: {default: 1024, min: 128}\n", `["M % 128 == 0", "N % 128 == 0"]`, "M=128 N=256"},
		{"small values first", "  N: {default: 1048576}\n", `["N % 4 == 0"]`, "N=4"},
		// the small products of many rules' numbers come before WG·7·11
		{"many rule numbers", "  N: {default: 1261568}\n", `["N % (WG * 7 * 11) == 0", "N >= 5", "N >= 13", "N >= 17", "N >= 19", "N >= 23"]`, "N=19712"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := "name: tiny_rules\nsources: {cuda: k.cu}\ndtypes: [f32]\nknobs: {WG: {values: [64, 256], default: 256}}\ndims:\n" + c.dims +
				"rules: " + c.rules + "\nbuffers:\n  - {name: Y, dtype: T, shape: [N], out: true}\ndispatches:\n  - {entry: k, grid: [1], threads: [WG], args: [Y]}\ncheck: none\n"
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": "#define BLOCK_DIM 1024\n__global__ void k(float* Y) {}\n"}))
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := f.TinySpec(profiler.F32)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range f.Schema().Dims {
				got = append(got, fmt.Sprintf("%s=%d", p.Name, s.Dims[p.Name]))
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("tiny spec %s, want %s", g, c.want)
			}
		})
	}
}
