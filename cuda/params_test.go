package cuda

import (
	"reflect"
	"strings"
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
		{profiler.Scalar{Kind: profiler.ScalarF16, F: 2.099609375}, 0x4033}, // a half: its 2 bytes in the slot's low bytes
		{profiler.Scalar{Kind: profiler.ScalarBF16, F: -2}, 0xc000},
	} {
		if got, err := scalarSlot(c.s); err != nil || got != c.want {
			t.Errorf("%s %+v: slot %#x, %v; want %#x", c.s.Kind, c.s, got, err, c.want)
		}
	}
	if _, err := scalarSlot(profiler.Scalar{Name: "h", Kind: "f8"}); err == nil {
		t.Error("an unknown kind got a slot")
	}
}

// A struct parameter between a buffer and a scalar: its bytes keep the
// scalars the plan packed and get the device address of each buffer its
// pointer fields name; the plan's bytes are not written to.
func TestParamBytesStruct(t *testing.T) {
	st := profiler.StructArg{Name: "p", Type: "Params", Bytes: make([]byte, 24),
		Pointers: []profiler.StructPointer{{Field: "y", Offset: 8, Arg: 1}, {Field: "x", Offset: 16, Arg: 0}}}
	st.Bytes[0] = 7 // int n = 7 at offset 0
	d := &profiler.Dispatch{Name: "k", Args: []string{"x", "y"}, Scalars: []profiler.Scalar{profiler.I32Param("n", 3)}, Structs: []profiler.StructArg{st},
		Order: []profiler.ArgRef{{Index: 0}, {Struct: true, Index: 0}, {Scalar: true, Index: 0}}}
	got, err := paramBytes(d, []uint64{0x1000, 0x2000})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{
		{0x00, 0x10, 0, 0, 0, 0, 0, 0},
		{7, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x20, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0, 0, 0, 0, 0, 0},
		{3, 0, 0, 0, 0, 0, 0, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("params\n got %v\nwant %v", got, want)
	}
	if st.Bytes[8] != 0 {
		t.Error("paramBytes wrote into the plan's struct bytes")
	}
	bad := *d
	bad.Structs = []profiler.StructArg{{Name: "p", Type: "Params", Bytes: make([]byte, 12), Pointers: []profiler.StructPointer{{Field: "y", Offset: 8, Arg: 1}}}}
	if _, err := paramBytes(&bad, []uint64{1, 2}); err == nil || !strings.Contains(err.Error(), "pointer field y at offset 8") {
		t.Errorf("a pointer past the struct's end: %v", err)
	}
	bad = *d
	bad.Order = []profiler.ArgRef{{Struct: true, Index: 1}}
	if _, err := paramBytes(&bad, []uint64{1, 2}); err == nil {
		t.Error("a struct index beyond Structs was accepted")
	}
	plain := &profiler.Dispatch{Name: "k", Args: []string{"x"}, Scalars: []profiler.Scalar{profiler.I32Param("n", 3)}}
	if _, err := paramBytes(plain, nil); err == nil {
		t.Error("one buffer named, none bound: accepted")
	}
}

// paramDispatch is a dispatch of six buffers, two scalars and a struct,
// interleaved.
func paramDispatch() (*profiler.Dispatch, []uint64) {
	d := &profiler.Dispatch{Name: "k", Args: []string{"a", "b", "c", "d", "e", "f", "g"},
		Scalars: []profiler.Scalar{profiler.I32Param("n", 3), profiler.F32Param("alpha", 2)},
		Structs: []profiler.StructArg{{Name: "p", Type: "P", Bytes: make([]byte, 24), Pointers: []profiler.StructPointer{{Field: "x", Offset: 8, Arg: 6}}}}}
	for i := range 6 {
		d.Order = append(d.Order, profiler.ArgRef{Index: i})
	}
	d.Order = append(d.Order, profiler.ArgRef{Scalar: true, Index: 0}, profiler.ArgRef{Struct: true, Index: 0}, profiler.ArgRef{Scalar: true, Index: 1})
	return d, []uint64{1, 2, 3, 4, 5, 6, 7}
}

// paramBytes runs on every launch of every rep: its parameters share one
// allocation rather than taking one each.
func TestParamBytesAllocations(t *testing.T) {
	d, ptrs := paramDispatch()
	if n := testing.AllocsPerRun(100, func() {
		if _, err := paramBytes(d, ptrs); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("paramBytes of %d parameters allocates %v times per launch, want at most 2", len(d.Order), n)
	}
}

func BenchmarkParamBytes(b *testing.B) {
	d, ptrs := paramDispatch()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := paramBytes(d, ptrs); err != nil {
			b.Fatal(err)
		}
	}
}
