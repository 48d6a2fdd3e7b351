package scaffold

import (
	"regexp"
	"testing"
)

// The launch reader never panics, and a grid it turns into an expression
// names only the plan's dims and knobs and the functions it allows.
func FuzzFindLaunch(f *testing.F) {
	f.Add("void l(int N, int block_size) { const int g = ceil_div(N * 32, (long) block_size); k<<<g, block_size>>>(N); }\nint bs[] = {1};")
	f.Add("k<<<(N + 255) / 256, 256, 0, stream>>>(x);")
	f.Add("// k<<<1, 64>>>(x);\nk<T, 4><<<dim3(N), dim3(B)>>>(x);")
	f.Add("k<<<")
	p := &plan{taken: map[string]string{"N": "dim", "block_size": "knob", "x": "buffer"}}
	names := regexp.MustCompile(`[A-Za-z_]\w*`)
	f.Fuzz(func(t *testing.T, src string) {
		lb, ok := findLaunch(src, "k")
		if !ok {
			return
		}
		if lb.name != "" && !identifier.MatchString(lb.name) {
			t.Errorf("block name %q", lb.name)
		}
		if e := gridExpr(lb.grid, p); e != "" {
			for _, n := range names.FindAllString(e, -1) {
				if k := p.taken[n]; n != "cdiv" && n != "min" && n != "max" && k != "dim" && k != "knob" {
					t.Errorf("grid %q names %s", e, n)
				}
			}
		}
	})
}
