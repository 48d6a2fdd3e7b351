package scaffold

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// scale_cast as a user wrote it, with an explicit specialization beside.
const scaleCastCUDA = `#include <cuda_fp16.h>
template <typename in_t, typename acc_t>
__global__ void scale_cast(in_t* __restrict__ y, const in_t* __restrict__ x, acc_t scale, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = static_cast<in_t>(static_cast<acc_t>(x[i]) * scale);
}
`

// The scalar-only parameter comes first: the dtype is still the buffers'.
const accFirstCUDA = `template <typename acc_t, typename T>
__global__ void axpby(T* y, const T* x, acc_t a, acc_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (T)(a * (acc_t)x[i] + b * (acc_t)y[i]);
}
`

// T is taken by a buffer and a scalar: it is the dtype for both.
const sharedTCUDA = `template <typename T>
__global__ void scale_t(T* y, T alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * alpha;
}
`

// A template type parameter only by-value scalars take is float in the
// entry (its TODO says so); one a buffer takes is the dtype; the
// manifest loads and passes mltop check.
func TestScaffoldScalarOnlyTypeParams(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want, not []string
	}{
		{name: "scale_cast<in_t, acc_t>", src: scaleCastCUDA,
			want: []string{
				"dtype_name: in_t", "dtypes: [f32, f16, bf16]",
				`- entry: "scale_cast<in_t, float>"   # acc_t is float: only by-value scale takes it (buffers take the dtype)`,
				"scale: 1.0   # TODO: the value the kernel gets for scale (acc_t is float in the entry: only by-value parameters take it)",
				"{name: y, dtype: in_t,", "{name: x, dtype: in_t,",
			},
			not: []string{"<in_t, in_t>", "dtype_name: acc_t"}},
		{name: "the scalar-only parameter first", src: accFirstCUDA,
			want: []string{
				`- entry: "axpby<float, T>"   # acc_t is float: only by-value a, b take it`,
				"{name: y, dtype: T,", "(acc_t is float in the entry",
			},
			not: []string{"dtype_name", "<T, T>", "<acc_t"}},
		{name: "T of a buffer and a scalar", src: sharedTCUDA,
			want: []string{`- entry: "scale_t<T>"`, "dtypes: [f32, f16, bf16]", "{name: y, dtype: T,"},
			not:  []string{"float>", "is float"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "tmpl", SrcPath: "k.cu", Src: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, tc.want, tc.not)
			checkNotesHaveTODOs(t, res)
			checkCompiles(t, res.Text, "k.cu", tc.src)
		})
	}
}

func TestScalarOnlyTypes(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want map[string]string // type parameter → the scalars that take it (joined)
	}{
		{scaleCastCUDA, map[string]string{"acc_t": "scale"}},
		{accFirstCUDA, map[string]string{"acc_t": "a,b"}},
		{sharedTCUDA, map[string]string{}},
		// U only in a pointee's template argument is a buffer's
		{"template <typename T, typename U> __global__ void k(T* y, const Pair<U>* p, U s) {}", map[string]string{}},
		// unused by any parameter: not float
		{"template <typename T, typename U> __global__ void k(T* y) { U u; }", map[string]string{}},
		// Metal: constant U& is one value
		{"template <typename T, typename U> kernel void k(device T* y, constant U& s, uint i [[thread_position_in_grid]]) {}", map[string]string{"U": "s"}},
	} {
		sigs := csrc.FindEntries(tc.src)
		if len(sigs) != 1 {
			t.Fatalf("%s: %d entries", tc.src, len(sigs))
		}
		c := newContext(tc.src, "cuda", sigs)
		got := scalarOnlyTypes(sigs[0], templateOf(c.toks, entryAt(c.toks, sigs[0])))
		if len(got) != len(tc.want) {
			t.Errorf("%s: scalarOnlyTypes = %v, want %v", tc.src, got, tc.want)
		}
		for k, v := range tc.want {
			if joined := strings.Join(got[k], ","); joined != v {
				t.Errorf("%s: %s taken by %q, want %q", tc.src, k, joined, v)
			}
		}
	}
}
