package pyref

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestNPYRoundTrip(t *testing.T) {
	for _, shape := range [][]int{{3}, {2, 3}, {1, 2, 2}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(i) * 0.5
		}
		var b bytes.Buffer
		if err := WriteNPY(&b, shape, data); err != nil {
			t.Fatal(err)
		}
		if (b.Len()-n*8)%64 != 0 {
			t.Errorf("header not padded to 64: %d", b.Len()-n*8)
		}
		a, err := ReadNPY(&b)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Shape, shape) || !slices.Equal(a.Data, data) || a.Descr != "<f8" {
			t.Errorf("%v: got %+v", shape, a)
		}
	}
	var b bytes.Buffer
	WriteNPYInt64(&b, []int{2}, []int64{-1, 7})
	a, err := ReadNPY(&b)
	if err != nil || !slices.Equal(a.Data, []float64{-1, 7}) {
		t.Errorf("int64: %+v %v", a, err)
	}
	if err := WriteNPY(&b, []int{3}, []float64{1}); err == nil {
		t.Error("shape/length mismatch not caught")
	}
}

func TestReadNPYErrors(t *testing.T) {
	hdr := func(h string) []byte {
		h += "\n"
		out := []byte("\x93NUMPY\x01\x00")
		out = append(out, byte(len(h)), byte(len(h)>>8))
		return append(out, h...)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"magic", []byte("PK\x03\x04xxxxxxxx"), "bad magic"},
		{"object", hdr("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"), "is not supported"},
		{"complex", hdr("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }"), "not numeric"},
		{"fortran", hdr("{'descr': '<f8', 'fortran_order': True, 'shape': (1,), }"), "Fortran"},
		{"short", hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }"), "short"},
		{"big-endian", hdr("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }"), "little-endian"},
	} {
		_, err := ReadNPY(bytes.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzReadNPY(f *testing.F) {
	var b bytes.Buffer
	WriteNPY(&b, []int{2, 2}, []float64{1, 2, 3, 4})
	f.Add(b.Bytes())
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<f4'}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := ReadNPY(bytes.NewReader(in))
		if err == nil {
			n := 1
			for _, s := range a.Shape {
				n *= s
			}
			if n != len(a.Data) {
				t.Fatalf("shape %v but %d values", a.Shape, len(a.Data))
			}
		}
	})
}
