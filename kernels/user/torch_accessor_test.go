package user

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// The packed accessors' types as signatures write them: the element type,
// the rank and the index width; other types are not accessors.
func TestParseAccessor(t *testing.T) {
	for _, c := range []struct {
		typ     string
		ok      bool
		want    accessorParam
		wantErr string
	}{
		{"at::PackedTensorAccessor64 <scalar_t , 3 , at::RestrictPtrTraits>", true, accessorParam{"scalar_t", 3, 8, false}, ""},
		{"const torch::PackedTensorAccessor32<float, 2, torch::RestrictPtrTraits>", true, accessorParam{"float", 2, 4, false}, ""},
		{"at::PackedTensorAccessor<int64_t, 1>", true, accessorParam{"int64_t", 1, 8, false}, ""},
		{"at::GenericPackedTensorAccessor<float, 2, at::DefaultPtrTraits, int32_t>", true, accessorParam{"float", 2, 4, false}, ""},
		{"at::GenericPackedTensorAccessor<float, 2, at::DefaultPtrTraits, int64_t>", true, accessorParam{"float", 2, 8, false}, ""},
		{"at::PackedTensorAccessor32<float, D, at::RestrictPtrTraits>", true, accessorParam{}, `the rank of at::PackedTensorAccessor32<float, D, at::RestrictPtrTraits> is "D"`},
		{"at::GenericPackedTensorAccessor<float, 2, at::DefaultPtrTraits, short>", true, accessorParam{}, "the index type of"},
		{"const at::cuda::detail::TensorInfo <int64_t , int>", true, accessorParam{"int64_t", 0, 4, true}, ""},
		{"cuda::detail::TensorInfo<scalar_t, int64_t>", true, accessorParam{"scalar_t", 0, 8, true}, ""},
		{"TensorInfo<scalar_t, unsigned int>", true, accessorParam{"scalar_t", 0, 4, true}, ""},
		{"at::cuda::detail::TensorInfo<float, short>", true, accessorParam{}, "the index type of at::cuda::detail::TensorInfo<float, short> is short"},
		{"at::cuda::detail::TensorInfo<float>", true, accessorParam{}, "TensorInfo takes the element type and the index type"},
		{"Params<float, 2>", false, accessorParam{}, ""},
		{"int", false, accessorParam{}, ""},
	} {
		got, ok, err := parseAccessor(csrc.Param{Scalar: c.typ})
		if ok != c.ok {
			t.Errorf("%s: accessor %v, want %v", c.typ, ok, c.ok)
			continue
		}
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want it to say %q", c.typ, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.typ, got, err, c.want)
		}
	}
}

// accessorKernel takes its tensors as packed accessors by value, as
// PyTorch extensions do (pytorch3d's ball query): a 64-bit one of the
// dtype, a 32-bit one of int64_t, and writes through a third.
const accessorKernel = `#include <ATen/ATen.h>
#include <torch/extension.h>
template <typename scalar_t>
__global__ void k(const at::PackedTensorAccessor64<scalar_t, 2, at::RestrictPtrTraits> x,
                  const torch::PackedTensorAccessor32<int64_t, 1, torch::RestrictPtrTraits> idx,
                  at::PackedTensorAccessor64<scalar_t, 2, at::RestrictPtrTraits> y, const float scale) {
  const int64_t r = blockIdx.x, c = threadIdx.x;
  if (r < x.size(0) && c < x.size(1)) {
    y[r][c] = x[idx[r]][c] * scale + (scalar_t)(x.stride(0) * 0);
  }
}
`

const accessorManifest = `name: acc_k
sources: {cuda: k.cu}
dtypes: [f32, f16]
dtype_name: scalar_t
dims: {rows: {default: 6}, cols: {default: 5}}
buffers:
  - {name: x, shape: [rows, cols]}
  - {name: idx, dtype: i64, shape: [rows], init: "randint(0, rows)"}
  - {name: y, shape: [rows, cols], out: true}
dispatches:
  - {entry: "k<scalar_t>", grid: [rows], threads: [32], args: ARGS}
check: none
`

// A buffer bound to a packed accessor is passed as the accessor: its
// address at offset 0 (a pointer the backend fills), then its sizes and
// its row-major strides in the accessor's index width; the kernel
// compiles with NVRTC at f32 and f16.
func TestPackedAccessorArgs(t *testing.T) {
	m := strings.Replace(accessorManifest, "ARGS", "[x, idx, y, 0.5]", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": accessorKernel})
	d := planF32(t, path).Dispatches[0]
	if !slices.Equal(d.Args, []string{"x", "idx", "y"}) || len(d.Structs) != 3 || len(d.Scalars) != 1 {
		t.Fatalf("dispatch args %v, %d structs, %d scalars; want x, idx, y as 3 structs and one scalar", d.Args, len(d.Structs), len(d.Scalars))
	}
	want := []profiler.ArgRef{{Struct: true, Index: 0}, {Struct: true, Index: 1}, {Struct: true, Index: 2}, {Scalar: true, Index: 0}}
	if !slices.Equal(d.Order, want) {
		t.Errorf("order %+v, want %+v", d.Order, want)
	}
	le := binary.LittleEndian
	x, idx, y := d.Structs[0], d.Structs[1], d.Structs[2]
	if len(x.Bytes) != 40 || le.Uint64(x.Bytes[8:]) != 6 || le.Uint64(x.Bytes[16:]) != 5 || le.Uint64(x.Bytes[24:]) != 5 || le.Uint64(x.Bytes[32:]) != 1 {
		t.Errorf("x: %d bytes %v; want 40: pointer, sizes 6 5, strides 5 1 as int64", len(x.Bytes), x.Bytes)
	}
	if len(idx.Bytes) != 16 || le.Uint32(idx.Bytes[8:]) != 6 || le.Uint32(idx.Bytes[12:]) != 1 {
		t.Errorf("idx: %d bytes %v; want 16: pointer, size 6, stride 1 as int32", len(idx.Bytes), idx.Bytes)
	}
	for i, st := range d.Structs {
		if want := []profiler.StructPointer{{Field: "data_", Offset: 0, Arg: i}}; !slices.Equal(st.Pointers, want) {
			t.Errorf("struct %s: pointers %+v, want %+v", st.Name, st.Pointers, want)
		}
	}
	if y.Name != "y" {
		t.Errorf("third struct %q, want y", y.Name)
	}
	for _, dt := range []profiler.DType{profiler.F32, profiler.F16} {
		prog, _ := preparedProgram(t, path, dt)
		compileOrSkip(t, prog)
	}
}

// What a packed accessor refuses: a buffer of another rank, a scalar
// expression, a buffer of another element type (when planned).
func TestPackedAccessorErrors(t *testing.T) {
	for _, c := range []struct{ args, yaml, want string }{
		{"[x, idx, y, 0.5]", "{name: x, shape: [rows, cols]}|{name: x, shape: [rows]}", "k.cu:4 is a packed accessor of rank 2: give the buffer a shape of 2 extents (the tensor's sizes)"},
		{"[y, idx, x, 0.5]", "", "output buffer y goes to parameter `at::PackedTensorAccessor64 <scalar_t , 2 , at::RestrictPtrTraits> x` of "},
		{"[rows, idx, y, 0.5]", "", "k.cu:4, a PyTorch packed accessor: bind one of the buffers (x, idx, y); mltop passes its address, sizes and contiguous strides"},
	} {
		m := strings.Replace(accessorManifest, "ARGS", c.args, 1)
		if c.yaml != "" {
			from, to, _ := strings.Cut(c.yaml, "|")
			m = strings.Replace(m, from, to, 1)
		}
		_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": accessorKernel}))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant it to say %q", c.args, err, c.want)
		}
	}
	// idx as f32: refused when the spec is planned, naming the element type
	m := strings.Replace(accessorManifest, "ARGS", "[x, idx, y, 0.5]", 1)
	m = strings.Replace(m, `{name: idx, dtype: i64, shape: [rows], init: "randint(0, rows)"}`, "{name: idx, dtype: f32, shape: [rows]}", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": accessorKernel}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err == nil || !strings.Contains(err.Error(), "buffer idx holds f32 but parameter") {
		t.Errorf("idx as f32: %v", err)
	}
}

// tensorInfoKernel takes an index tensor as at::cuda::detail::TensorInfo
// by value and walks it with IndexToOffset, as pytorch_scatter's
// scatter_kernel does; it adds each source element into its output row.
const tensorInfoKernel = `#include <ATen/cuda/detail/TensorInfo.cuh>
#include <ATen/cuda/detail/IndexUtils.cuh>
template <typename scalar_t>
__global__ void k(const scalar_t* src, const at::cuda::detail::TensorInfo<int64_t, int> index_info,
                  scalar_t* out, int numel) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < numel) {
    int offset = at::cuda::detail::IndexToOffset<int64_t, int, -1>::get(i, index_info);
    atomicAdd(out + index_info.data[offset], (float)src[i] * index_info.isContiguous());
  }
}
`

const tensorInfoManifest = `name: tinfo_k
sources: {cuda: k.cu}
dtypes: [f32]
dtype_name: scalar_t
dims: {rows: {default: 6}, cols: {default: 5}}
buffers:
  - {name: src, shape: [rows, cols]}
  - {name: index, dtype: i64, shape: [rows, cols], init: "randint(0, rows)"}
  - {name: out, shape: [rows], inout: true, init: zeros}
dispatches:
  - {entry: "k<scalar_t>", grid: [1], threads: [64], args: ARGS}
check: none
`

// A buffer bound to a TensorInfo parameter is passed as the struct
// getTensorInfo fills: its address, 25 sizes and 25 strides in the index
// type (the buffer's shape and row-major strides first), then the rank;
// the stub header declares TensorInfo and IndexToOffset, so the kernel
// compiles with NVRTC. A scalar there is refused, naming the buffers.
func TestTensorInfoArgs(t *testing.T) {
	path := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(tensorInfoManifest, "ARGS", "[src, index, out, rows * cols]", 1), "k.cu": tensorInfoKernel})
	d := planF32(t, path).Dispatches[0]
	if !slices.Equal(d.Args, []string{"src", "index", "out"}) || len(d.Structs) != 1 {
		t.Fatalf("dispatch args %v, %d structs; want src, index, out with index as a struct", d.Args, len(d.Structs))
	}
	want := []profiler.ArgRef{{Index: 0}, {Struct: true, Index: 0}, {Index: 2}, {Scalar: true, Index: 0}}
	if !slices.Equal(d.Order, want) {
		t.Errorf("order %+v, want %+v", d.Order, want)
	}
	le := binary.LittleEndian
	st := d.Structs[0]
	// 8 + 25·4 + 25·4 + 4 = 212, padded to 216
	if len(st.Bytes) != 216 || le.Uint32(st.Bytes[8:]) != 6 || le.Uint32(st.Bytes[12:]) != 5 ||
		le.Uint32(st.Bytes[108:]) != 5 || le.Uint32(st.Bytes[112:]) != 1 || le.Uint32(st.Bytes[208:]) != 2 {
		t.Errorf("index: %d bytes %v; want 216: pointer, sizes 6 5, strides 5 1 at 108, dims 2 at 208", len(st.Bytes), st.Bytes)
	}
	if want := []profiler.StructPointer{{Field: "data", Offset: 0, Arg: 1}}; !slices.Equal(st.Pointers, want) {
		t.Errorf("pointers %+v, want %+v", st.Pointers, want)
	}
	prog, _ := preparedProgram(t, path, profiler.F32)
	compileOrSkip(t, prog)

	_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(tensorInfoManifest, "ARGS", "[src, 0, out, rows * cols]", 1), "k.cu": tensorInfoKernel}))
	if err == nil || !strings.Contains(err.Error(), "a PyTorch TensorInfo: bind one of the buffers (src, index, out); mltop passes its address, sizes, contiguous strides and rank, as at::cuda::detail::getTensorInfo<int64_t, int>() does") {
		t.Errorf("a scalar at the TensorInfo: %v", err)
	}
}

// planF32 loads the manifest at path and plans its default spec at f32 for
// the CUDA test device.
func planF32(t *testing.T, path string) *profiler.Plan {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Plan(profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema()), cudaDev)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
