package csrc

import "testing"

// An MLX-style file: a forward kernel and a vjp kernel that reads a
// function constant, instantiated by [[host_name]].
const usesSource = `constant bool has_w [[function_constant(20)]];

template <typename T>
[[kernel]] void fwd(const device T* x, device T* out, uint i [[thread_position_in_grid]]) {
  out[i] = x[i];
}

template <typename T>
[[kernel]] void vjp(const device T* x, device T* g, uint i [[thread_position_in_grid]]) {
  if (has_w) { g[i] = x[i]; }
}

inline float scaled(float v) { return has_scale ? v * 2 : v; }

kernel void plain(device float* y [[buffer(0)]]);

template [[host_name("fwd_f32")]] [[kernel]] decltype(fwd<float>) fwd<float>;
template [[host_name("vjp_f32")]] [[kernel]] decltype(vjp<float>) vjp<float>;
`

func TestUsedOutsideKernels(t *testing.T) {
	only := func(names ...string) func(string) bool {
		return func(k string) bool {
			for _, n := range names {
				if k == n {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		name, used string
		skip       func(string) bool
		want       bool
	}{
		{"constant in a skipped kernel only", "has_w", only("vjp", "plain"), false},
		{"constant in a launched kernel", "has_w", only("fwd", "plain"), true},
		{"nothing skipped", "has_w", only(), true},
		{"a helper's use is never skipped", "has_scale", only("fwd", "vjp", "plain"), true},
		{"a parameter of a skipped kernel", "g", only("vjp"), false},
		{"a parameter of a launched kernel", "out", only("vjp"), true},
		{"a declaration without a body is skipped", "y", only("plain"), false},
		{"never named", "absent", only(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := UsedOutsideKernels(usesSource, c.used, c.skip); got != c.want {
				t.Errorf("UsedOutsideKernels(%q) = %v, want %v", c.used, got, c.want)
			}
		})
	}
}
