package csrc

import "testing"

// An MLX-style file: a forward kernel and a vjp kernel that reads a
// function constant, instantiated by [[host_name]]; ggml-style helpers and
// a macro defined once per section.
const usesSource = `constant bool has_w [[function_constant(20)]];
constant bool has_scale [[function_constant(21)]];
constant short op_a [[function_constant(22)]];
constant short op_b [[function_constant(23)]];
constant bool has_bias [[function_constant(24)]];
constant bool use_bias = has_bias;

inline float scaled(float v) { return has_scale ? v * 2 : v; }
inline float twice(float v) { return scaled(v) + scaled(v); }

template <typename T>
[[kernel]] void fwd(const device T* x, device T* out, uint i [[thread_position_in_grid]]) {
  out[i] = x[i];
}

template <typename T>
[[kernel]] void vjp(const device T* x, device T* g, uint i [[thread_position_in_grid]]) {
  if (has_w) { g[i] = twice(x[i]); }
}

#define OP op_a
kernel void kern_a(device float* y [[buffer(0)]]) { y[0] = OP + (use_bias ? 1 : 0); }
#undef OP
#define OP op_b
kernel void kern_b(device float* y [[buffer(0)]]) { y[0] = OP; }

kernel void plain(device float* y [[buffer(0)]]);

constant short op_h [[function_constant(25)]];
[[host_name("kern_h")]]
kernel void kern_h(device float* y [[buffer(0)]]) { y[0] = op_h; }

template [[host_name("fwd_f32")]] [[kernel]] decltype(fwd<float>) fwd<float>;
template [[host_name("vjp_f32")]] [[kernel]] decltype(vjp<float>) vjp<float>;

inline void deq(device const float* x, short il, thread float4& r) { r = x[il]; }
template <typename B, short nl, void (*deq_f)(device const B*, short, thread float4&)>
kernel void rows(device const void* src, device float4* dst, uint i [[thread_position_in_grid]]) {
  float4 t;
  deq_f((device const B*) src, i % nl, t);
  dst[i] = t;
}
template [[host_name("rows_f")]] kernel decltype(rows<float, 2, deq>) rows<float, 2, deq>;
`

// NamesReached follows the launched kernels into the helpers they call,
// the globals they read and the #define in effect where they use a macro.
func TestNamesReached(t *testing.T) {
	launching := func(names ...string) func(string) bool {
		return func(k string) bool {
			for _, n := range names {
				if k == n {
					return false
				}
			}
			return true
		}
	}
	for _, c := range []struct {
		name, used string
		skip       func(string) bool
		want       bool
	}{
		{"constant in a skipped kernel only", "has_w", launching("fwd"), false},
		{"constant in a launched kernel", "has_w", launching("vjp"), true},
		{"a helper of a launched kernel, two calls down", "has_scale", launching("vjp"), true},
		{"a helper only a skipped kernel calls", "has_scale", launching("fwd", "kern_a", "kern_b"), false},
		{"through a global the kernel reads", "has_bias", launching("kern_a"), true},
		{"the #define in effect at the use", "op_a", launching("kern_a"), true},
		{"not the macro's other #define", "op_b", launching("kern_a"), false},
		{"the later #define", "op_b", launching("kern_b"), true},
		{"the earlier #define, undefined before", "op_a", launching("kern_b"), false},
		{"a parameter of a skipped kernel", "g", launching("fwd"), false},
		{"a parameter of a launched kernel", "out", launching("fwd"), true},
		{"parameters of skipped kernels only", "y", launching("fwd", "vjp"), false},
		{"never named", "absent", launching("fwd", "vjp"), false},
		// ggml's non-template kernels carry their host name before `kernel`
		{"a [[host_name]] kernel's constant", "op_h", launching("kern_h"), true},
		{"not the other kernels' constants", "has_w", launching("kern_h"), false},
		{"a [[host_name]] kernel skipped", "op_h", launching("fwd"), false},
		// ggml's kernel_get_rows_q takes a function as a template argument:
		// the parentheses of `void (*deq_f)(…)` are not the kernel's
		// parameter list, so it is a kernel, and the others stay skipped
		{"a kernel with a function-pointer template parameter", "dst", launching("rows"), true},
		{"not the others' constants beside it", "op_h", launching("rows"), false},
		{"not the others' helpers beside it", "has_scale", launching("rows"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NamesReached(usesSource, c.skip)[c.used]; got != c.want {
				t.Errorf("NamesReached(…)[%q] = %v, want %v", c.used, got, c.want)
			}
		})
	}
	// No launched kernel defined (a macro writes them): every declaration
	// but the skipped kernels counts.
	const byMacro = "constant bool has_w [[function_constant(20)]];\ninline float w(float v) { return has_w ? v : 0; }\nMAKE_KERNEL(k1)\n"
	if !NamesReached(byMacro, launching("k1"))["has_w"] {
		t.Error("a kernel a macro writes: the helper's constant is not counted")
	}
}
