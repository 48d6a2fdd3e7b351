package scaffold

import (
	"strings"
	"testing"
)

// hostNamesSource is a Metal template kernel whose instances are its
// [[host_name]] explicit instantiations (mistral.rs's ssm.metal writes
// them out with every parameter; MLX's with decltype), over a value
// parameter and a type parameter.
const hostNamesSource = `#include <metal_stdlib>
using namespace metal;

template <typename T, int cf>
[[kernel]] void scan(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * cf;
}

template [[host_name("scan_c1")]] [[kernel]] void scan<float, 1>(const device float*, device float*, uint);
template [[host_name("scan_c2")]] [[kernel]] void scan<float, 2>(const device float*, device float*, uint);
template [[host_name("scan_c4_h")]] [[kernel]] decltype(scan<half, 4>) scan<half, 4>;
`

// The instances set the value parameter's knob: all their values, the
// default that of the instance --entry names (else the first); the type
// parameter stays the dtype's (no instance fixes the buffers' type); an
// unknown name still lists the kernels.
func TestMetalHostNameInstances(t *testing.T) {
	for _, c := range []struct {
		entries []string
		want    []string
		err     string
	}{
		{nil, []string{`cf: {values: [1, 2, 4], default: 1}`, `[[host_name]] instances at lines 10, 11, 12`, `entry: "scan<T, cf>"`, `dtypes: [f32, f16, bf16]`}, ""},
		{[]string{"scan_c2"}, []string{`cf: {values: [1, 2, 4], default: 2}`, `(the default: the one at line 11)`, `entry: "scan<T, cf>"`}, ""},
		{[]string{"scan_c8"}, nil, `has no kernel "scan_c8" (kernels found: scan)`},
	} {
		res, err := Manifest(Request{Name: "my_scan", SrcPath: "/w/k.metal", Src: hostNamesSource, Entries: c.entries, Dir: "/w"})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.entries, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.entries, err)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%v: manifest lacks %q:\n%s", c.entries, w, res.Text)
			}
		}
	}
}

// functorInstancesSource instantiates a template over an element type and
// a functor of it through macros that paste the host names together (as
// MLX's scan.metal does: contiguous_scan<float, float, CumSum<float>, 4,
// …>), below a macro invoked over several lines.
const functorInstancesSource = `#include <metal_stdlib>
using namespace metal;
template <typename U> struct Sum { static constexpr constant U init = 0; U operator()(U a, U b) { return a + b; } };
template <typename T, typename Op, int N>
[[kernel]] void scan(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  y[i] = Op()(x[i], Op::init) * N;
}
#define NOTE(a, b) a + b
constant int k = NOTE(
    1,
    2);
#define inst(name, t, op, n) \
  template [[host_name("scan_" #name)]] [[kernel]] decltype(scan<t, op<t>, n>) scan<t, op<t>, n>;
inst(sum_f32, float, Sum, 4)
inst(sum_f16, half, Sum, 4)
`

// The functor argument becomes the same functor of the dtype (not the
// dtype itself), and the instance's line is that of the macro invocation.
func TestMetalHostNameFunctorInstances(t *testing.T) {
	res, err := Manifest(Request{Name: "my_scan", SrcPath: "/w/k.metal", Src: functorInstancesSource, Entries: []string{"scan_sum_f16"}, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`entry: "scan<T, Sum<T>, N>"`, `N: {values: [4], default: 4}`, `line 16 passes 4`} {
		if !strings.Contains(res.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, res.Text)
		}
	}
}

// An instance converting between two types (ggml's kernel_cpy_f32_f16 is
// kernel_cpy_t_t<float, half>) keeps the second type fixed: the entry
// takes the dtype in and writes half, as the named instance does.
func TestMetalHostNameConvertingInstance(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
template <typename T0, typename T1>
kernel void cpy(const device T0* x [[buffer(0)]], device T1* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  y[i] = (T1) x[i];
}
typedef decltype(cpy<float, float>) cpy_t;
template [[host_name("cpy_f32_f32")]] kernel cpy_t cpy<float, float>;
template [[host_name("cpy_f32_f16")]] kernel cpy_t cpy<float, half>;
`
	for _, c := range []struct {
		entry string
		want  []string
	}{
		{"cpy_f32_f16", []string{`entry: "cpy<T0, half>"`, `{name: y, dtype: f16`}},
		{"cpy_f32_f32", []string{`entry: "cpy<T0, T0>"`, `{name: y, dtype: T0`}},
	} {
		res, err := Manifest(Request{Name: "my_cpy", SrcPath: "/w/k.metal", Src: src, Entries: []string{c.entry}, Dir: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s: manifest lacks %q:\n%s", c.entry, w, res.Text)
			}
		}
	}
}

// defaultedInstancesSource's instances give the template's leading
// arguments only, its last parameter left to its default (as MLX's
// rope.metal instantiates rope<float, int32_t> of `template <typename T,
// typename IdxT, int N = 4>`, and rope<bfloat16_t, int32_t>).
const defaultedInstancesSource = `#include <metal_stdlib>
using namespace metal;

template <typename T, typename IdxT, int N = 4>
[[kernel]] void gather_rows(const device T* x [[buffer(0)]], device T* y [[buffer(1)]],
                            constant const int& cols [[buffer(2)]], uint2 i [[thread_position_in_grid]]) {
  IdxT at = IdxT(i.y) * IdxT(cols) + IdxT(i.x);
  for (int k = 0; k < N; k++) y[at] = x[at] * T(k + 1);
}

template [[host_name("gather_rows_float32")]] [[kernel]] decltype(gather_rows<float, int32_t>) gather_rows<float, int32_t>;
template [[host_name("gather_rows_large_float32")]] [[kernel]] decltype(gather_rows<float, int64_t>) gather_rows<float, int64_t>;
template [[host_name("gather_rows_bfloat16")]] [[kernel]] decltype(gather_rows<bfloat16_t, int32_t>) gather_rows<bfloat16_t, int32_t>;
`

// An instance that leaves trailing parameters to their defaults still
// chooses the entry's arguments: its index type stays (not the dtype:
// an index of type float does not compile), and the defaulted ones are
// left out, as the instance leaves them.
func TestMetalHostNameInstancesWithDefaults(t *testing.T) {
	for _, c := range []struct {
		entry, want string
	}{
		{"gather_rows_float32", `entry: "gather_rows<T, int32_t>"`},
		{"gather_rows_large_float32", `entry: "gather_rows<T, int64_t>"`},
		{"gather_rows_bfloat16", `entry: "gather_rows<T, int32_t>"`}, // MLX's bfloat16_t is the element type
	} {
		res, err := Manifest(Request{Name: "my_gather", SrcPath: "/w/k.metal", Src: defaultedInstancesSource, Entries: []string{c.entry}, Dir: "/w"})
		if err != nil {
			t.Fatalf("%s: %v", c.entry, err)
		}
		if !strings.Contains(res.Text, c.want) || strings.Contains(res.Text, "\n  N: {") {
			t.Errorf("%s: manifest lacks %q (or has a knob N):\n%s", c.entry, c.want, res.Text)
		}
		load(t, res.Text, "k.metal", defaultedInstancesSource)
	}
}

// functorMacroSource's instances pass a functor a macro writes (as
// candle's unary.metal passes usilu, from define_unary_op) beside the
// element type, and an instance over an integer type (candle's copy_u32).
const functorMacroSource = `#include <metal_stdlib>
using namespace metal;
#define DEFINE_OP(NAME, EXPR) struct NAME { template <typename T> T operator()(T x) { return EXPR; } };
DEFINE_OP(op_twice, x + x)
DEFINE_OP(op_square, x * x)

template <typename T, typename U, typename Op>
[[kernel]] void apply(const device T* x [[buffer(0)]], device U* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Op op;
  y[i] = static_cast<U>(op(x[i]));
}

#define INST(NAME, T, OP) template [[host_name(NAME)]] [[kernel]] decltype(apply<T, T, OP>) apply<T, T, OP>;
INST("twice_f32", float, op_twice)
INST("square_f32", float, op_square)
INST("square_f16", half, op_square)
INST("twice_u32", uint32_t, op_twice)
`

// A functor that is no function of the element type stays in the entry
// as the instance writes it; only the arguments equal to the element
// type follow the dtype. An instance over an integer type is taken as
// written (a spec's dtype is a float): its buffers keep that type, its
// entry the functor.
func TestMetalHostNameInstancesKeepFunctor(t *testing.T) {
	for entry, wants := range map[string][]string{
		"twice_f32":  {`entry: "apply<T, T, op_twice>"`, `dtypes: [f32, f16, bf16]`},
		"square_f16": {`entry: "apply<T, T, op_square>"`},
		"twice_u32":  {`entry: "apply<uint32_t, uint32_t, op_twice>"`, `dtypes: [f32]   # the buffers' types are fixed`, `{name: x, dtype: u32,`, `{name: y, dtype: u32,`},
	} {
		res, err := Manifest(Request{Name: "my_apply", SrcPath: "/w/k.metal", Src: functorMacroSource, Entries: []string{entry}, Dir: "/w"})
		if err != nil {
			t.Fatalf("%s: %v", entry, err)
		}
		for _, want := range wants {
			if !strings.Contains(res.Text, want) {
				t.Errorf("%s: manifest lacks %q:\n%s", entry, want, res.Text)
			}
		}
		load(t, res.Text, "k.metal", functorMacroSource)
	}
}

// An instance over a block struct of the source and a function as a
// template argument (ggml's kernel_get_rows_q4_0 is
// kernel_get_rows_q<block_q4_0, 2, dequantize_q4_0>, the template taking
// `void (*dequantize_func)(device const block_q *, short, thread float4 &)`):
// the entry keeps the struct and the function as the instance writes them,
// and only the integer is a knob. Before, the function pointer's `)` was a
// knob named `)` (entry `k<block_q, nl, )>`) and block_q the dtype's name.
func TestMetalHostNameStructAndFunctionArgs(t *testing.T) {
	src := "#include <metal_stdlib>\nusing namespace metal;\n" +
		"typedef struct { half d; uint8_t qs[16]; } block_q4;\n" +
		"void deq_q4(device const block_q4 * xb, short il, thread float4 & reg) { reg = float4(float(xb->d) * il); }\n" +
		"template<typename block_q, short nl, void (*deq_f)(device const block_q *, short, thread float4 &)>\n" +
		"kernel void get_rows_q(device const void * src0, device float4 * dst, uint i [[thread_position_in_grid]]) {\n" +
		"  float4 t;\n  deq_f((device const block_q *) src0 + i/nl, i%nl, t);\n  dst[i] = t;\n}\n" +
		"typedef decltype(get_rows_q<block_q4, 2, deq_q4>) get_rows_q_t;\n" +
		"template [[host_name(\"get_rows_q4\")]] kernel get_rows_q_t get_rows_q<block_q4, 2, deq_q4>;\n"
	res, err := Manifest(Request{Name: "my_rows", SrcPath: "/w/k.metal", Src: src, Entries: []string{"get_rows_q4"}, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{`entry: "get_rows_q<block_q4, nl, deq_q4>"`, "nl: {values: [2], default: 2}"},
		[]string{"): {", ", )>", "dtype_name: block_q", "deq_f:"})
	checkNotesHaveTODOs(t, res)
	load(t, res.Text, "k.metal", src)
}
