package cuda

import (
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestScalarSlot(t *testing.T) {
	for _, c := range []struct {
		s    profiler.Scalar
		want uint64
	}{
		{profiler.I32Param("n", -1), 0xffffffff}, // 4 bytes, not sign-extended into the slot
		{profiler.F32Param("a", 1), 0x3f800000},
		{profiler.Scalar{Kind: profiler.ScalarF64, F: 1}, 0x3ff0000000000000},
		{profiler.Scalar{Kind: profiler.ScalarI8, I: -1}, 0xff},
		{profiler.Scalar{Kind: profiler.ScalarU16, I: 0xabcd}, 0xabcd},
		{profiler.Scalar{Kind: profiler.ScalarI64, I: -2}, 0xfffffffffffffffe},
		{profiler.Scalar{Kind: profiler.ScalarBool, I: 5}, 1},
	} {
		if got, err := scalarSlot(c.s); err != nil || got != c.want {
			t.Errorf("%s %+v: slot %#x, %v; want %#x", c.s.Kind, c.s, got, err, c.want)
		}
	}
	if _, err := scalarSlot(profiler.Scalar{Name: "h", Kind: "f16"}); err == nil {
		t.Error("an unknown kind got a slot")
	}
}
