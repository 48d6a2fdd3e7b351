package user

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// PyTorch extension kernels take tensors as packed accessors by value
// (pytorch3d's BallQueryKernel: `const at::PackedTensorAccessor64<scalar_t,
// 3, at::RestrictPtrTraits> p1`), which the launcher makes with
// tensor.packed_accessor64<…>(): the data pointer, then the sizes, then the
// strides, each an index_t (int32 for …32, int64 for …64). A buffer bound
// to such a parameter is passed as that struct: its address, its shape and
// its contiguous (row-major) strides.

// accessorParam is a by-value packed-accessor parameter, or a
// TensorInfo one (info).
type accessorParam struct {
	elem  string // the element type as written: "scalar_t", "int64_t"
	rank  int    // N; 0 for a TensorInfo, which takes any rank up to tensorInfoDims
	index int    // bytes of index_t: 4 or 8
	// info: at::cuda::detail::TensorInfo<T, IndexType>, which kernels of
	// PyTorch and its extensions (pytorch_scatter's scatter_kernel) take
	// by value: the data pointer, sizes[25], strides[25] in IndexType,
	// then int dims, as getTensorInfo<T, IndexType>(tensor) fills it.
	info bool
}

// tensorInfoDims is MAX_TENSORINFO_DIMS, the length of TensorInfo's
// sizes and strides arrays.
const tensorInfoDims = 25

// kind names the parameter's type for messages.
func (acc accessorParam) kind() string {
	if acc.info {
		return "a PyTorch TensorInfo"
	}
	return "a PyTorch packed accessor"
}

// indexWidth reads an index type's width in bytes: 0 for a type mltop
// does not lay out.
func indexWidth(t string) int {
	switch strings.TrimPrefix(t, "std::") {
	case "int", "int32_t", "unsigned", "unsigned int", "uint32_t":
		return 4
	case "long", "long long", "int64_t", "ptrdiff_t", "size_t", "uint64_t", "unsigned long", "unsigned long long":
		return 8
	}
	return 0
}

// accessorNames are the class templates, with the index width each
// implies (0: its fourth template argument, else int64).
var accessorNames = map[string]int{
	"PackedTensorAccessor32":      4,
	"PackedTensorAccessor64":      8,
	"PackedTensorAccessor":        8,
	"GenericPackedTensorAccessor": 0,
}

// parseAccessor reads a parameter's type as a packed accessor: ok is
// false for any other type; err says why a packed accessor's arguments
// cannot be used (a rank that is no number).
func parseAccessor(prm csrc.Param) (acc accessorParam, ok bool, err error) {
	if prm.Pointer {
		return acc, false, nil
	}
	t := strings.Join(strings.Fields(strings.NewReplacer("const", " ", "volatile", " ").Replace(prm.Scalar)), " ")
	name, args := splitTemplateName(t)
	if args == nil {
		return acc, false, nil
	}
	for _, ns := range []string{"::at::", "::torch::", "at::", "torch::"} {
		name = strings.TrimPrefix(name, ns)
	}
	if info := strings.TrimPrefix(strings.TrimPrefix(name, "cuda::"), "detail::"); info == "TensorInfo" {
		return parseTensorInfo(t, args)
	}
	width, known := accessorNames[name]
	if !known {
		return acc, false, nil
	}
	if len(args) < 2 {
		return acc, true, fmt.Errorf("%s takes the element type and the rank: %s has %d template arguments", name, t, len(args))
	}
	rank, perr := strconv.Atoi(args[1])
	if perr != nil || rank < 1 || rank > 16 {
		return acc, true, fmt.Errorf("the rank of %s is %q: mltop reads a number from 1 to 16 there; write it as a number", t, args[1])
	}
	acc = accessorParam{elem: args[0], rank: rank, index: width}
	if width == 0 {
		acc.index = 8
		if len(args) >= 4 {
			if acc.index = indexWidth(args[3]); acc.index == 0 {
				return acc, true, fmt.Errorf("the index type of %s is %s: mltop lays out int32_t and int64_t ones", t, args[3])
			}
		}
	}
	return acc, true, nil
}

// parseTensorInfo reads TensorInfo<T, IndexType>'s arguments.
func parseTensorInfo(t string, args []string) (accessorParam, bool, error) {
	if len(args) != 2 {
		return accessorParam{}, true, fmt.Errorf("TensorInfo takes the element type and the index type: %s has %d template arguments", t, len(args))
	}
	acc := accessorParam{elem: args[0], index: indexWidth(args[1]), info: true}
	if acc.index == 0 {
		return acc, true, fmt.Errorf("the index type of %s is %s: mltop lays out int32_t and int64_t ones", t, args[1])
	}
	return acc, true, nil
}

// PackedAccessor says whether a parameter is a PyTorch packed accessor
// taken by value, with its element type as written and its rank: `mltop
// new` makes it a buffer of that rank.
func PackedAccessor(prm csrc.Param) (elem string, rank int, ok bool) {
	acc, ok, err := parseAccessor(prm)
	if !ok || err != nil {
		return "", 0, false
	}
	return acc.elem, acc.rank, true
}

// accessorArg is the struct a buffer passes as a packed accessor for one
// spec: 8 bytes of pointer (filled by the backend), the sizes, then the
// strides, padded to 8 bytes.
func (f *Family) accessorArg(pd *profiler.Dispatch, up uparam, bufName string, e map[string]any) (profiler.StructArg, error) {
	acc := *up.acc
	var shape []int64
	for _, b := range f.bufs {
		if b.name != bufName {
			continue
		}
		for _, p := range b.shape {
			v, err := p.Int(e)
			if err != nil {
				return profiler.StructArg{}, err
			}
			shape = append(shape, v)
		}
	}
	rank, slots := acc.rank, acc.rank // slots: the length of sizes and strides
	if acc.info {
		rank, slots = len(shape), tensorInfoDims
	}
	if len(shape) != rank || rank > slots { // checked at load; a guard
		return profiler.StructArg{}, fmt.Errorf("buffer %s has %d dimensions but parameter `%s` takes %d", bufName, len(shape), describe(up.param), acc.rank)
	}
	strides := make([]int64, rank)
	n := int64(1)
	for i := rank - 1; i >= 0; i-- {
		strides[i] = n
		n *= shape[i]
	}
	size := 8 + 2*slots*acc.index
	if acc.info {
		size += 4 // int dims
	}
	size = (size + 7) / 8 * 8
	st := profiler.StructArg{Name: up.param.Name, Type: structTypeName(up.param), Bytes: make([]byte, size)}
	put := func(off int, v int64, what string) error {
		if acc.index == 4 {
			if v > 1<<31-1 {
				wide := "a PackedTensorAccessor64"
				if acc.info {
					wide = "TensorInfo<" + acc.elem + ", int64_t>"
				}
				return fmt.Errorf("buffer %s: its %s %d does not fit the int32 index of parameter `%s`: take %s, or a smaller shape", bufName, what, v, describe(up.param), wide)
			}
			binary.LittleEndian.PutUint32(st.Bytes[off:], uint32(v))
			return nil
		}
		binary.LittleEndian.PutUint64(st.Bytes[off:], uint64(v))
		return nil
	}
	for i := range rank {
		if err := put(8+i*acc.index, shape[i], fmt.Sprintf("size(%d)", i)); err != nil {
			return st, err
		}
		if err := put(8+(slots+i)*acc.index, strides[i], fmt.Sprintf("stride(%d)", i)); err != nil {
			return st, err
		}
	}
	field := "data_"
	if acc.info {
		field = "data"
		binary.LittleEndian.PutUint32(st.Bytes[8+2*slots*acc.index:], uint32(rank))
	}
	st.Pointers = []profiler.StructPointer{{Field: field, Offset: 0, Arg: len(pd.Args)}}
	pd.Args = append(pd.Args, bufName)
	return st, nil
}

// torchAccessors are at::TensorAccessor and the packed accessors as device
// code of an extension uses them: acc[i][j] (a TensorAccessor one rank
// down per index, a T& at the last), size(i), stride(i), data(), with the
// layout packed_accessor32/64 gives (data_, sizes_[N], strides_[N]), also
// as torch:: names. N is a size_t (decltype(sizeof(0))), as a template
// that deduces it from an accessor needs.
const torchAccessors = `#ifndef MLTOP_TORCH_ACCESSORS_
#define MLTOP_TORCH_ACCESSORS_
namespace at {
template <typename T> struct DefaultPtrTraits { typedef T* PtrType; };
template <typename T> struct RestrictPtrTraits { typedef T* __restrict__ PtrType; };
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = long long>
class TensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessorBase(PtrType data, const index_t* sizes, const index_t* strides) : data_(data), sizes_(sizes), strides_(strides) {}
  __host__ __device__ index_t stride(index_t i) const { return strides_[i]; }
  __host__ __device__ index_t size(index_t i) const { return sizes_[i]; }
  __host__ __device__ PtrType data() { return data_; }
  __host__ __device__ const PtrType data() const { return data_; }
 protected:
  PtrType data_;
  const index_t* sizes_;
  const index_t* strides_;
};
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = long long>
class TensorAccessor : public TensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides) : TensorAccessorBase<T, N, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
  __host__ __device__ const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
};
template <typename T, template <typename U> class PtrTraits, typename index_t>
class TensorAccessor<T, 1, PtrTraits, index_t> : public TensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ TensorAccessor(PtrType data, const index_t* sizes, const index_t* strides) : TensorAccessorBase<T, 1, PtrTraits, index_t>(data, sizes, strides) {}
  __host__ __device__ T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  __host__ __device__ const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = long long>
class GenericPackedTensorAccessorBase {
 public:
  typedef typename PtrTraits<T>::PtrType PtrType;
  __host__ __device__ index_t stride(index_t i) const { return strides_[i]; }
  __host__ __device__ index_t size(index_t i) const { return sizes_[i]; }
  __host__ __device__ PtrType data() { return data_; }
  __host__ __device__ const PtrType data() const { return data_; }
 protected:
  PtrType data_;
  index_t sizes_[N];
  index_t strides_[N];
};
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = long long>
class GenericPackedTensorAccessor : public GenericPackedTensorAccessorBase<T, N, PtrTraits, index_t> {
 public:
  __host__ __device__ TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
  __host__ __device__ const TensorAccessor<T, N - 1, PtrTraits, index_t> operator[](index_t i) const {
    return TensorAccessor<T, N - 1, PtrTraits, index_t>(this->data_ + this->strides_[0] * i, this->sizes_ + 1, this->strides_ + 1);
  }
};
template <typename T, template <typename U> class PtrTraits, typename index_t>
class GenericPackedTensorAccessor<T, 1, PtrTraits, index_t> : public GenericPackedTensorAccessorBase<T, 1, PtrTraits, index_t> {
 public:
  __host__ __device__ T& operator[](index_t i) { return this->data_[this->strides_[0] * i]; }
  __host__ __device__ const T& operator[](index_t i) const { return this->data_[this->strides_[0] * i]; }
};
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor32 = GenericPackedTensorAccessor<T, N, PtrTraits, int>;
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits>
using PackedTensorAccessor64 = GenericPackedTensorAccessor<T, N, PtrTraits, long long>;
template <typename T, decltype(sizeof(0)) N, template <typename U> class PtrTraits = DefaultPtrTraits, typename index_t = long long>
using PackedTensorAccessor = GenericPackedTensorAccessor<T, N, PtrTraits, index_t>;
}  // namespace at
namespace torch {
using at::DefaultPtrTraits;
using at::RestrictPtrTraits;
using at::TensorAccessor;
using at::GenericPackedTensorAccessor;
using at::PackedTensorAccessor32;
using at::PackedTensorAccessor64;
using at::PackedTensorAccessor;
}  // namespace torch
#endif
`

// bindAccessor binds a buffer to a packed-accessor parameter: its rank
// must be the accessor's, its dtype the element type's (checked per spec).
func (bl *builder) bindAccessor(a uarg, prm csrc.Param, up uparam, acc accessorParam, perr error, ts typeScope, apath, afield, file string, sig csrc.Signature) (uparam, error) {
	d := bl.d
	switch {
	case perr != nil:
		return up, d.err(apath, afield, "parameter `%s` of %s:%d: %v", describe(prm), file, sig.Line, perr)
	case a.buf == "" && acc.info:
		return up, d.err(apath, afield, "%q goes to parameter `%s` of %s:%d, %s: bind one of the buffers (%s); mltop passes its address, sizes, contiguous strides and rank, as at::cuda::detail::getTensorInfo<%s, %s>() does", a.text, describe(prm), file, sig.Line, acc.kind(), strings.Join(bufNames(bl.f.bufs), ", "), acc.elem, map[int]string{4: "int", 8: "int64_t"}[acc.index])
	case a.buf == "":
		return up, d.err(apath, afield, "%q goes to parameter `%s` of %s:%d, a PyTorch packed accessor: bind one of the buffers (%s); mltop passes its address, sizes and contiguous strides, as tensor.packed_accessor%d() does", a.text, describe(prm), file, sig.Line, strings.Join(bufNames(bl.f.bufs), ", "), acc.index*8)
	}
	b := bl.buf(a.buf)
	if acc.info {
		// a const TensorInfo still holds a T*: the kernel may write through it
		if len(b.shape) > tensorInfoDims {
			return up, d.err(apath, afield, "buffer %s has %d dimensions but parameter `%s` of %s:%d is a TensorInfo, which holds at most %d: give the buffer fewer extents", a.buf, len(b.shape), describe(prm), file, sig.Line, tensorInfoDims)
		}
		up.acc = &acc
		up.elem = ts.elem(csrc.Param{Pointer: true, Pointee: acc.elem})
		return up, nil
	}
	if len(b.shape) != acc.rank {
		return up, d.err(apath, afield, "buffer %s has %d dimensions but parameter `%s` of %s:%d is a packed accessor of rank %d: give the buffer a shape of %d extents (the tensor's sizes)", a.buf, len(b.shape), describe(prm), file, sig.Line, acc.rank, acc.rank)
	}
	if b.out && prm.Const { // a const accessor's elements are const T&
		return up, d.err(apath, afield, "output buffer %s goes to parameter `%s` of %s:%d, a const packed accessor, which the kernel cannot write through: bind an input there", a.buf, describe(prm), file, sig.Line)
	}
	up.acc = &acc
	up.elem = ts.elem(csrc.Param{Pointer: true, Pointee: acc.elem})
	return up, nil
}

// torchTensorInfo is at::cuda::detail::TensorInfo with the layout
// getTensorInfo<T, IndexType>(tensor) fills (the data pointer, sizes and
// strides of MAX_TENSORINFO_DIMS entries, the rank), and IndexToOffset,
// with which kernels turn a linear index into an element's offset (Dims
// -1: the rank read from the struct).
const torchTensorInfo = `#ifndef MLTOP_TORCH_TENSORINFO_
#define MLTOP_TORCH_TENSORINFO_
#ifndef MAX_TENSORINFO_DIMS
#define MAX_TENSORINFO_DIMS 25
#endif
namespace at { namespace cuda { namespace detail {
template <typename T, typename IndexType>
struct TensorInfo {
  __host__ __device__ bool isContiguous() const { return dims == 1 && strides[0] == 1; }
  T* data;
  IndexType sizes[MAX_TENSORINFO_DIMS];
  IndexType strides[MAX_TENSORINFO_DIMS];
  int dims;
};
template <typename T, typename IndexType, int Dims>
struct IndexToOffset {
  static __host__ __device__ IndexType get(IndexType linear, const TensorInfo<T, IndexType>& info) {
    const int rank = Dims < 0 ? info.dims : Dims;
    IndexType offset = 0;
    for (int d = rank - 1; d > 0; --d) {
      offset += (linear % info.sizes[d]) * info.strides[d];
      linear /= info.sizes[d];
    }
    return offset + linear * info.strides[0];
  }
};
}}}  // namespace at::cuda::detail
#endif
`
