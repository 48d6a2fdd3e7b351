package metal

import (
	"strings"
	"testing"
)

func TestWriteMLXKernelSignature(t *testing.T) {
	k := MLXKernel{
		Name:     "myexp",
		Inputs:   []MLXArg{{Name: "inp", Type: "T"}, {Name: "alpha", Type: "float", Scalar: true}},
		Outputs:  []MLXArg{{Name: "out", Type: "T"}},
		Template: []TemplateArg{{"T", "float"}, {"N", "4"}, {"causal", "true"}},
		Body:     "uint elem = thread_position_in_grid.x; // threads_per_grid is not used\nif (elem < uint(inp_shape[0])) out[elem] = alpha * exp(inp[elem]) * T(N);",
	}
	got, err := WriteMLXKernel(k)
	if err != nil {
		t.Fatal(err)
	}
	want := `#include <metal_stdlib>
using namespace metal;
template <typename T, int N, bool causal>
[[kernel]] void custom_kernel_myexp(
  const device T* inp [[buffer(0)]],
  const constant int* inp_shape [[buffer(1)]],
  const constant float& alpha [[buffer(2)]],
  device T* out [[buffer(3)]],
  uint3 thread_position_in_grid [[thread_position_in_grid]]) {
`
	if !strings.HasPrefix(got, want) {
		t.Errorf("source starts\n%s\nwant\n%s", got, want)
	}
	inst := `template [[host_name("myexp")]] [[kernel]] decltype(custom_kernel_myexp<float, 4, true>) custom_kernel_myexp<float, 4, true>;`
	if !strings.Contains(got, inst) {
		t.Errorf("source lacks the instantiation %s:\n%s", inst, got)
	}
	hosts, err := HostNames(got)
	if err != nil || hosts["myexp"].Template != "custom_kernel_myexp" {
		t.Errorf("HostNames of the written source = %v, %v", hosts, err)
	}
	plain := MLXKernel{Name: "copy", Inputs: []MLXArg{{Name: "a", Type: "float"}}, Outputs: []MLXArg{{Name: "b", Type: "float"}},
		Body: "b[thread_index_in_threadgroup] = a[thread_index_in_threadgroup] + a_ndim + a_strides[0];"}
	got, err = WriteMLXKernel(plain)
	for _, w := range []string{"[[kernel]] void copy(", "const constant int64_t* a_strides [[buffer(1)]]", "const constant int& a_ndim [[buffer(2)]]", "device float* b [[buffer(3)]]", "uint thread_index_in_threadgroup [[thread_index_in_threadgroup]]"} {
		if err != nil || !strings.Contains(got, w) {
			t.Errorf("untemplated source lacks %q (%v):\n%s", w, err, got)
		}
	}
	if strings.Contains(got, "host_name") || strings.Contains(got, "a_shape") {
		t.Errorf("untemplated source has a host_name or an unused shape:\n%s", got)
	}
}

func TestWriteMLXKernelErrors(t *testing.T) {
	base := func() MLXKernel {
		return MLXKernel{Name: "k", Inputs: []MLXArg{{Name: "x", Type: "float"}, {Name: "s", Type: "float", Scalar: true}}, Outputs: []MLXArg{{Name: "y", Type: "float"}}, Body: "y[0] = x[0];"}
	}
	cases := map[string]struct {
		edit func(*MLXKernel)
		want string
	}{
		"shape of an unknown name": {func(k *MLXKernel) { k.Body = "y[0] = xx_shape[0];" }, "xx_shape"},
		"shape of an output":       {func(k *MLXKernel) { k.Body = "y[0] = y_ndim;" }, "y_ndim"},
		"shape of a scalar":        {func(k *MLXKernel) { k.Body = "y[0] = s_strides[0];" }, "s_strides"},
		"bad kernel name":          {func(k *MLXKernel) { k.Name = "my-kernel" }, "my-kernel"},
		"empty body":               {func(k *MLXKernel) { k.Body = " \n" }, "empty body"},
		"duplicate name":           {func(k *MLXKernel) { k.Outputs[0].Name = "x" }, `"x"`},
		"template clashes":         {func(k *MLXKernel) { k.Template = []TemplateArg{{"y", "float"}} }, `"y"`},
		"no type":                  {func(k *MLXKernel) { k.Inputs[0].Type = "" }, "x has no type"},
		"scalar output":            {func(k *MLXKernel) { k.Outputs[0].Scalar = true }, "output y"},
		"template without value":   {func(k *MLXKernel) { k.Template = []TemplateArg{{"T", ""}} }, "T has no value"},
	}
	for name, c := range cases {
		k := base()
		c.edit(&k)
		if _, err := WriteMLXKernel(k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", name, err, c.want)
		}
	}
	if _, err := WriteMLXKernel(base()); err != nil {
		t.Errorf("the unbroken kernel: %v", err)
	}
}
