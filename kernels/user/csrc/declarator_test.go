package csrc

import (
	"slices"
	"testing"
)

func TestDeclarator(t *testing.T) {
	for _, c := range []struct {
		decl, name string
		elem, ext  []string
		ptr        bool
	}{
		{"__constant__ float c_Kernel[KERNEL_LENGTH];", "c_Kernel", []string{"float"}, []string{"KERNEL_LENGTH"}, false},
		{"static __device__ const unsigned int lut[4][2 * R + 1];", "lut", []string{"unsigned", "int"}, []string{"4", "2 * R + 1"}, false},
		{"__device__ float* d_p;", "d_p", []string{"float"}, nil, true},
		{"__constant__ float *a, b[4];", "b", []string{"float"}, []string{"4"}, false},
		{"__constant__ ns::vec3 pts[8];", "pts", []string{"ns", "::", "vec3"}, []string{"8"}, false},
		{"__constant__ float other[2];", "missing", nil, nil, false},
		{"__device__ int *p, *q;", "q", []string{"int"}, nil, true},
		{", x[2]", "x", nil, []string{"2"}, false},
	} {
		elem, ext, ptr := Declarator(c.decl, c.name)
		if !slices.Equal(elem, c.elem) || !slices.Equal(ext, c.ext) || ptr != c.ptr {
			t.Errorf("Declarator(%q, %q) = %q, %q, %v; want %q, %q, %v", c.decl, c.name, elem, ext, ptr, c.elem, c.ext, c.ptr)
		}
	}
}
