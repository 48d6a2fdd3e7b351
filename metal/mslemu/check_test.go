package mslemu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// Only names of Apple's compiler on g++'s error lines count; notes and
// user names do not.
func TestAppleBuiltins(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"bf16_math.h:36:31: error: '__metal_fabs' was not declared in this scope\nbf16_math.h:232:5: error: '__METAL_MAYBE_FAST_MATH__' was not declared in this scope\nbf16_math.h:36:31: error: '__metal_fabs' was not declared", "__METAL_MAYBE_FAST_MATH__, __metal_fabs"},
		{"k.metal:6:3: error: 'Tx' was not declared in this scope", ""},
		{"k.metal:3:1: note: in expansion of macro '__metal_helper'\nk.metal:6:3: error: 'Tx' was not declared", ""},
		{"k.metal:1: error: '__metal_a' '__metal_b' '__metal_c' '__metal_d' '__metal_e'", "__metal_a, __metal_b, __metal_c, __metal_d"},
		{"k.metal:1: error: 'my__metal_x' and '__metal_' alone", ""},
	} {
		if got := strings.Join(appleBuiltins(c.out), ", "); got != c.want {
			t.Errorf("appleBuiltins(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

// A source far beyond the emulation reports its first errors, not all of
// them.
func TestCheckUserStopsAfterTheFirstErrors(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "unknown_type_%d value_%d;\n", i, i)
	}
	b.WriteString("kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 1; }\n")
	err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "many.metal", Code: b.String()})
	if err == nil {
		t.Fatal("a source with 40 unknown types compiled")
	}
	if n := strings.Count(err.Error(), "error:"); n > MaxCheckErrors+1 || n == 0 {
		t.Errorf("%d errors reported, want 1 to %d:\n%v", n, MaxCheckErrors+1, err)
	}
	if !strings.Contains(err.Error(), "unknown_type_0") {
		t.Errorf("the first error is missing:\n%v", err)
	}
}

// Metal's integer atomics beyond fetch_add compile on the emulation: a
// kernel whose last group resets its counter (store), and one that keeps
// a running minimum and maximum (fetch_min/max, compare-exchange).
func TestIntegerAtomicsCompile(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	src := `#include <metal_stdlib>
using namespace metal;

[[kernel]] void k(device atomic_uint* counter [[buffer(0)]], device atomic_int* lo [[buffer(1)]],
                  device atomic_int* hi [[buffer(2)]], device const int* x [[buffer(3)]],
                  uint i [[thread_position_in_grid]], uint n [[threads_per_grid]]) {
  atomic_fetch_min_explicit(lo, x[i], memory_order_relaxed);
  atomic_fetch_max_explicit(hi, x[i], memory_order_relaxed);
  int seen = atomic_load_explicit(hi, memory_order_relaxed);
  atomic_compare_exchange_weak_explicit(hi, &seen, seen, memory_order_relaxed, memory_order_relaxed);
  uint was = atomic_exchange_explicit(counter, 1u, memory_order_relaxed);
  atomic_fetch_sub_explicit(counter, was, memory_order_relaxed);
  atomic_fetch_or_explicit(counter, 0u, memory_order_relaxed);
  if (atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed) == n - 1) {
    atomic_store_explicit(counter, 0u, memory_order_relaxed);
  }
}
`
	if err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "atomics.metal", Code: src}); err != nil {
		t.Fatalf("the integer atomics do not compile on the emulation:\n%v", err)
	}
}

// What candle's element-wise kernels use of MSL compiles with Metal's
// types: bfloat arithmetic stays bfloat (its float mixtures are float),
// math on half returns half, precise:: and fast:: math, sign, the M_*_F
// constants, and a uint2 thread position. The static_asserts fail if an
// operation falls back to another type.
func TestElementwiseMathCompilesWithMetalTypes(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	src := `#include <metal_stdlib>
using namespace metal;

template <typename T> T act(T x) {
  T c = static_cast<T>(M_SQRT1_2_F * M_2_SQRTPI_F);
  return static_cast<T>(0.5) * x * (static_cast<T>(1.0) + T(precise::tanh(c * x)));
}

template <typename T> float lits(T x, bool c);

kernel void k(device const half* h, device const bfloat* b, device float* out,
              uint2 gid [[thread_position_in_grid]]) {
  const uint i = gid.x + gid.y;
  static_assert(std::is_same_v<decltype(exp(h[i])), half>, "exp(half) is half");
  static_assert(std::is_same_v<decltype(fast::exp(h[i])), half>, "fast::exp(half) is half");
  static_assert(std::is_same_v<decltype(b[i] * b[i] + b[i]), bfloat>, "bfloat arithmetic is bfloat");
  static_assert(std::is_same_v<decltype(b[i] > 0 ? b[i] : 2.0f * exp(b[i])), float>, "bfloat with float is float");
  bfloat s = b[i];
  s += bfloat(1.0f);
  out[i] = act(h[i]) + act(s) + act(1.0f) + sign(h[i]) + abs(-s) + M_PI_F + lits(h[i], i > 1) + lits(s, i > 2);
}

// Integer literals against half and bfloat take the floating type, as on
// Metal: candle's urelu is x < 0 ? 0 : x (g++ found int and the emulated
// bfloat convertible both ways); float literals widen to float; T converts
// to float and bool implicitly.
template <typename T> float lits(T x, bool c) {
  static_assert(std::is_same_v<decltype(x < 0 ? 0 : x), T>, "?: with an int literal is the floating type");
  static_assert(std::is_same_v<decltype(c ? x : 0), T>, "?: with an int literal is the floating type");
  static_assert(std::is_same_v<decltype(x * 2), T> && std::is_same_v<decltype(2 - x), T>, "T op int is T");
  static_assert(std::is_same_v<decltype(1 / x), T> && std::is_same_v<decltype(-x + x), T>, "T op T is T");
  static_assert(std::is_same_v<decltype(x == 0), bool> && std::is_same_v<decltype(x >= 0.5f), bool>, "comparisons");
  static_assert(std::is_same_v<decltype(x * 0.5f), float> && std::is_same_v<decltype(c ? x : 0.5f), float>, "T op float is float");
  static_assert(std::is_same_v<decltype(max(x, 0)), T> && std::is_same_v<decltype(min(1, x)), T>, "max, min with an int");
  static_assert(std::is_same_v<decltype(clamp(x, 0, 1)), T> && std::is_same_v<decltype(select(0, x, c)), T>, "clamp, select with ints");
  float f = x;
  f += x;
  bool p = x;
  p = x;
  T y = 0;
  y += 1;
  y *= x;
  y -= 0.5f;
  return f + float(y) + static_cast<int>(x) + float(static_cast<half>(x)) + (x ? 1.0f : 0.0f) + (p ? 1.0f : 0.0f);
}
// bfloat results round to bfloat (ties to even): 1.0078125 * 3 = 3.0234375
// is halfway between 3.015625 and 3.03125.
constexpr bfloat relu_neg = bfloat(-2.0f) < 0 ? 0 : bfloat(-2.0f);
static_assert(float(relu_neg) == 0.0f && float(bfloat(1.0078125f) * 3) == 3.03125f, "bfloat rounding");
static_assert(float(bfloat(3.0f) / 2 + bfloat(0.00390625f)) == 1.5f, "bfloat op bfloat rounds (a tie to even)");
`
	if err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: "elementwise.metal", Code: src}); err != nil {
		t.Fatalf("the element-wise math does not compile on the emulation:\n%v", err)
	}
}

// condenseErrors keeps each error with its quoted source line and drops
// the notes on candidates, include stacks and carets; an error in the
// emulation's headers names the user's line, one in the C++ library is
// kept only when it is all there is.
func TestCondenseErrors(t *testing.T) {
	const shim = "/tmp/x/shim"
	cases := []struct{ name, out, want string }{
		{"candidates", `k.metal: In function 'void f(float4)':
k.metal:5:32: error: no matching function for call to 'exp(emu_vec<float, 4>, float)'
    5 |     dst[i] = exp(x, 1.0f);
      |              ~~~^~~~~~~~~
In file included from /tmp/x/shim/metal_stdlib:22,
                 from <command-line>:
/usr/include/c++/12/cmath:234:5: note: candidate: 'template<class _Tp> double std::exp(_Tp)'
  234 |     exp(_Tp __x)
      |     ^~~
/usr/include/c++/12/cmath:234:5: error: no type named '__type'
/tmp/x/shim/metal_stdlib:482:15: note: candidate: 'half metal::exp(half)'
  482 | EMU_HALF_MATH(exp)
k.metal:7:3: error: 'y' was not declared in this scope
    7 |   y = 1;
      |   ^
compilation terminated due to -fmax-errors=10.`, `k.metal:5:32: error: no matching function for call to 'exp(emu_vec<float, 4>, float)'
    5 |     dst[i] = exp(x, 1.0f);
k.metal:7:3: error: 'y' was not declared in this scope
    7 |   y = 1;
compilation terminated due to -fmax-errors=10.`},
		{"in_the_shim", `/tmp/x/shim/emu_vecmath.h: In instantiation of 'emu_vec<T, N> metal::exp(const emu_vec<T, N>&) [with T = Foo; int N = 4]':
k.metal:9:14:   required from here
/tmp/x/shim/emu_vecmath.h:40:1: error: no matching function for call to 'exp(const Foo&)'
   40 | EMU_VEC_UNARY(exp)`, `mslemu/emu_vecmath.h:40:1: error: no matching function for call to 'exp(const Foo&)' (from k.metal:9:14)
   40 | EMU_VEC_UNARY(exp)`},
		{"library_only", `/usr/include/c++/12/bits/stl_vector.h:10:2: error: static assertion failed
   10 |  static_assert(x);`, `/usr/include/c++/12/bits/stl_vector.h:10:2: error: static assertion failed`},
		{"no_error_lines", "g++: fatal: cannot execute 'cc1plus'\n", "g++: fatal: cannot execute 'cc1plus'"},
	}
	for _, c := range cases {
		if got := condenseErrors(c.out, shim); got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// A call g++ answers with 40 lines of candidate notes is one error line
// and its source line in check's report.
func TestCheckUserReportsOneLinePerError(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	src := `#include <metal_stdlib>
using namespace metal;
kernel void k(device float4* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  x[i] = exp(x[i], 2.0f);
}
`
	// g++ quotes the line from the file the #line directives name
	file := filepath.Join(t.TempDir(), "cands.metal")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckUser(context.Background(), profiler.Program{Entry: "k", File: file, Code: src})
	if err == nil {
		t.Fatal("exp with two arguments compiled")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "cands.metal:4:") || !strings.Contains(lines[2], "exp(x[i], 2.0f)") || strings.Contains(err.Error(), "note:") {
		t.Errorf("want the message, the error line and its source line, got:\n%v", err)
	}
}
