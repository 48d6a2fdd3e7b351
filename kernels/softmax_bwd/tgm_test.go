package softmaxbwd

import (
	"testing"

	"github.com/mltop/mltop/internal/plancheck"
	"github.com/mltop/mltop/shaders"
)

func TestSoftmaxBwdTGMMatchesPlan(t *testing.T) {
	src, err := shaders.Source("metal", "softmax_bwd", ".metal")
	if err != nil {
		t.Fatal(err)
	}
	for _, wg := range []int{32, 64, 128, 256, 512, 1024} {
		got := plancheck.DeclaredTGM(t, src, map[string]int{"WG": wg, "DTYPE": 1}, 2)
		items := SoftmaxBwdTGM(wg)
		if len(got) != 1 || got["red_smem"] != items[0].Bytes {
			t.Errorf("WG=%d: kernel %v, plan %v", wg, got, items)
		}
	}
}
