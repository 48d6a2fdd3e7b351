package cuda

import (
	"strings"
	"testing"
)

func TestCoresidentError(t *testing.T) {
	for _, c := range []struct {
		name        string
		grid        [3]int
		threads     int
		perSM, sms  int
		limiter     string
		want, wantN []string // in the message; not in it
	}{
		{name: "fits exactly", grid: [3]int{1056, 1, 1}, threads: 256, perSM: 8, sms: 132, limiter: "threads"},
		{name: "fits, 2-D", grid: [3]int{66, 2, 1}, threads: 256, perSM: 1, sms: 132, limiter: "tgm"},
		{name: "one too many", grid: [3]int{1057, 1, 1}, threads: 256, perSM: 8, sms: 132, limiter: "threads",
			want:  []string{"dispatch k is cooperative", "grid [1057 1 1] is 1057 blocks", "more than the 1056 resident at once on H100", "8 blocks of 256 threads per SM, limited by threads, × 132 SMs", "max_coresident", "lower what binds (threads)"},
			wantN: []string{"__launch_bounds__"}},
		{name: "2-D over", grid: [3]int{132, 3, 1}, threads: 512, perSM: 2, sms: 132, limiter: "tgm", want: []string{"is 396 blocks", "more than the 264"}},
		{name: "registers bind", grid: [3]int{1056, 1, 1}, threads: 256, perSM: 6, sms: 132, limiter: "registers", want: []string{"limited by registers", "__launch_bounds__(256, 8)"}},
		{name: "no block fits", grid: [3]int{1, 1, 1}, threads: 1024, perSM: 0, sms: 132, limiter: "tgm", want: []string{"not one block of 1024 threads fits on an SM of H100", "limited by tgm"}},
	} {
		err := coresidentError("k", "H100", c.grid, c.threads, c.perSM, c.sms, c.limiter)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: not refused", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nlacks %q", c.name, err, w)
			}
		}
		for _, w := range c.wantN {
			if strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nhas %q", c.name, err, w)
			}
		}
	}
}
