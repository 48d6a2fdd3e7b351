package mslemu

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// laneRow is one row of the emulation's table test: expr is MSL (with
// `using namespace metal;`) giving a vector; want is C++ giving lane i of
// the expected result in double, from the inputs' values A[i], B[i], the
// matrix element M(c, r) (column c, row r), std:: math and i.
type laneRow struct{ name, expr, want string }

// laneInputs are the values every row computes on: the vectors a and b,
// the integer vectors t (uint3) and s (short4), the float4x4 m whose
// columns are a, b, 2a, b-1, and h = half4(a); A, B and M are the same in
// double for the references.
const laneInputs = `#include <metal_stdlib>
using namespace metal;
static const float4 a(0.5f, -1.25f, 2.0f, 3.5f), b(1.5f, 0.25f, -2.0f, 0.75f);
static const float4x4 m(a, b, a * 2.0f, b - 1.0f);
static const half4 h = half4(a);
static uint3 t(7u, 8u, 9u);
static const uint3 ct = t;
static const ushort3 us(4, 5, 6);
static const ulong2 ul(1ul << 40, 3ul);
static const short4 s(-3, 5, -7, 9);
static const double A[4] = {0.5, -1.25, 2.0, 3.5}, B[4] = {1.5, 0.25, -2.0, 0.75};
static double M(int c, int r) {
  const double col[4][4] = {{A[0], A[1], A[2], A[3]}, {B[0], B[1], B[2], B[3]},
                            {2 * A[0], 2 * A[1], 2 * A[2], 2 * A[3]}, {B[0] - 1, B[1] - 1, B[2] - 1, B[3] - 1}};
  return col[c][r];
}
static_assert(std::is_same_v<decltype(16.h), half> && std::is_same_v<decltype(0.5h), half>, "h literals are half");
static_assert(sizeof(float4x4) == 64 && sizeof(float3x3) == 48 && sizeof(half2x4) == 16, "Metal's matrix sizes");
static_assert(sizeof(uint3) == 16 && sizeof(ushort3) == 8 && sizeof(bool4) == 4, "Metal's vector sizes");
static int mismatches = 0;
template <typename V, typename W>
static void emu_row(const char* name, const V& got, W want) {
  using E = typename V::value_type;
  const double rel = std::is_same_v<E, half> ? 2e-3 : 1e-6;
  for (int i = 0; i < emu_lanes<V>; i++) {
    const double g = double(got[i]), w = want(i);
    if (!(std::fabs(g - w) <= rel * (1 + std::fabs(w)))) {
      std::printf("MISMATCH %s lane %d: got %.9g, want %.9g\n", name, i, g, w);
      mismatches++;
    }
  }
}
int main() {
`

// runLaneTable compiles and runs rows on the emulation and returns the
// names of the rows with a lane that differs from its reference.
func runLaneTable(t *testing.T, rows []laneRow) map[string]bool {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	var b strings.Builder
	b.WriteString(laneInputs)
	for _, r := range rows {
		fmt.Fprintf(&b, "  emu_row(%q, %s, [](int i) -> double { return %s; });\n", r.name, r.expr, r.want)
	}
	b.WriteString("  return mismatches != 0;\n}\n")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "rows.cc"), filepath.Join(dir, "rows")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	shim, err := filepath.Abs("../testdata/mslemu")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gxx, "-std=c++20", "-w", "-D__HAVE_BFLOAT__=1", "-I", shim, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("the table does not compile on the emulation: %v\n%s", err, condenseErrors(string(out), shim))
	}
	out, _ := exec.Command(bin).CombinedOutput()
	bad := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "MISMATCH" {
			bad[f[1]] = true
			t.Log(l)
		}
	}
	return bad
}

// vectorRows: Metal's math element-wise on vectors against std:: on each
// lane, indexing every vector type, matrix products, vectors built from
// vectors, h literals.
var vectorRows = []laneRow{
	{"exp", "exp(-a)", "std::exp(-A[i])"},
	{"exp2", "exp2(a)", "std::exp2(A[i])"},
	{"log", "log(abs(a))", "std::log(std::fabs(A[i]))"},
	{"log2", "log2(fabs(b))", "std::log2(std::fabs(B[i]))"},
	{"sqrt", "sqrt(abs(a))", "std::sqrt(std::fabs(A[i]))"},
	{"rsqrt", "rsqrt(abs(b))", "1 / std::sqrt(std::fabs(B[i]))"},
	{"sin", "sin(a)", "std::sin(A[i])"},
	{"cos", "cos(b)", "std::cos(B[i])"},
	{"tanh", "tanh(a)", "std::tanh(A[i])"},
	{"precise::tanh", "precise::tanh(a * b)", "std::tanh(A[i] * B[i])"},
	{"fast::exp_half4", "fast::exp(h)", "std::exp(A[i])"},
	{"precise::sqrt_half4", "metal::precise::sqrt(abs(h))", "std::sqrt(std::fabs(A[i]))"},
	{"floor", "floor(a)", "std::floor(A[i])"},
	{"ceil", "ceil(a)", "std::ceil(A[i])"},
	{"round", "round(b * 3.0f)", "std::round(B[i] * 3)"},
	{"fmin", "fmin(a, b)", "std::fmin(A[i], B[i])"},
	{"fmax", "fmax(a, 1.0f)", "std::fmax(A[i], 1.0)"},
	{"min", "min(a, b)", "std::min(A[i], B[i])"},
	{"max", "max(0.0f, a)", "std::max(0.0, A[i])"},
	{"clamp", "clamp(a, -1.0f, 1.0f)", "std::clamp(A[i], -1.0, 1.0)"},
	{"clamp_vec", "clamp(a, b - 1.0f, b + 1.0f)", "std::clamp(A[i], B[i] - 1, B[i] + 1)"},
	{"pow", "pow(abs(a), b)", "std::pow(std::fabs(A[i]), B[i])"},
	{"fma", "fma(a, b, a)", "A[i] * B[i] + A[i]"},
	{"mix", "mix(a, b, 0.25f)", "A[i] + (B[i] - A[i]) * 0.25"},
	{"step", "step(b, a)", "A[i] < B[i] ? 0.0 : 1.0"},
	{"sign", "sign(a - 2.0f)", "A[i] > 2 ? 1.0 : (A[i] < 2 ? -1.0 : 0.0)"},
	{"select", "select(a, b, a > b)", "A[i] > B[i] ? B[i] : A[i]"},
	{"silu", "a / (1.0f + exp(-a))", "A[i] / (1 + std::exp(-A[i]))"},
	{"abs_int", "abs(s)", "std::abs(double(s[i]))"},
	{"int_ops", "int4((s % 4) + (s << 1) - (s & 3))", "double(s[i] % 4 + (s[i] << 1) - (s[i] & 3))"},
	{"index_uint3", "float4(float(t[2]), float(ct[0]), float(us[1]), float(ul[1]))", "std::array<double, 4>{9, 7, 5, 3}[i]"},
	{"index_write", "[] { uint3 w = t; w[1] = 5u; w[2] += ct[0]; return w; }()", "std::array<double, 3>{7, 5, 16}[i]"},
	{"index_ulong", "float2(float(ul[0] >> 40), float(ul[1]))", "std::array<double, 2>{1, 3}[i]"},
	{"vec_from_vecs", "float4(float2(a[3], a[2]), b[0], 1.0f)", "std::array<double, 4>{A[3], A[2], B[0], 1}[i]"},
	{"mat_column", "m[3]", "M(3, i)"},
	{"mat_times_vec", "m * a", "M(0, i) * A[0] + M(1, i) * A[1] + M(2, i) * A[2] + M(3, i) * A[3]"},
	{"vec_times_mat", "b * m", "B[0] * M(i, 0) + B[1] * M(i, 1) + B[2] * M(i, 2) + B[3] * M(i, 3)"},
	{"mat_times_mat", "(m * m)[1]", "M(0, i) * M(1, 0) + M(1, i) * M(1, 1) + M(2, i) * M(1, 2) + M(3, i) * M(1, 3)"},
	{"transpose", "transpose(m)[2]", "M(i, 2)"},
	{"mat_diagonal", "float4x4(2.0f)[1]", "i == 1 ? 2.0 : 0.0"},
	{"mat_scalars", "float2x2(1.0f, 2.0f, 3.0f, 4.0f)[1]", "std::array<double, 2>{3, 4}[i]"},
	{"mat_to_half", "((half4x4)m)[2]", "M(2, i)"},
	{"mat_2x4", "(float2x4(a, b) * float2(2.0f, -1.0f))", "2 * A[i] - B[i]"},
	{"mat_scaled", "(m * 0.5f + m)[0]", "1.5 * M(0, i)"},
	{"h_literals", "half4(16.h, -8.h, 0.5h, 1.h) * h", "std::array<double, 4>{16, -8, 0.5, 1}[i] * A[i]"},
	{"packed_plus_vec", "packed_float4(a) + b", "A[i] + B[i]"},
	{"packed_char_to_float", "float4(packed_char4(char4(s))) * 0.5f", "s[i] * 0.5"},
	{"packed_lanes", "[] { packed_float3 p(1.0f, 2.0f, 3.0f); p[1] = 5.0f; return float3(p.z, p.y, p[0]); }()", "std::array<double, 3>{3, 5, 1}[i]"},
	{"matrix_template", "metal::matrix<float, 2, 4>(a, b) * float2(1.0f, 1.0f)", "A[i] + B[i]"},
	{"vec_int_assign", "[] { float4 v; v = 2; return v; }()", "2.0"},
	{"bfloat_int_assign", "[] { bfloat4 v; v = 2; bfloat x; x = 3; return float4(v) * float(x); }()", "6.0"},
	{"limits", "float4(float(HALF_MAX), float(HALF_MIN), float(HALF_EPSILON), FLT_MAX)", "std::array<double, 4>{65504, 6.103515625e-05, 9.765625e-04, 3.4028234663852886e38}[i]"},
	{"traits", "float4(float(metal::is_floating_point_v<half>), float(metal::is_same_v<uint, unsigned int>), float(metal::is_vector_v<float4>), float(sizeof(packed_float3)))", "std::array<double, 4>{1, 1, 1, 12}[i]"},
}

// Every row matches its reference lane by lane.
func TestEmulatedVectorMathMatchesScalars(t *testing.T) {
	if bad := runLaneTable(t, vectorRows); len(bad) > 0 {
		t.Errorf("rows whose lanes differ from the scalar reference: %v", bad)
	}
}

// The table catches a wrong result: rows whose reference is another
// function, lane or column than the expression's are reported, and only
// those.
func TestEmulatedVectorMathCatchesWrongResults(t *testing.T) {
	broken := []laneRow{
		{"exp_vs_exp2", "exp(a)", "std::exp2(A[i])"},
		{"lanes_swapped", "float4(float2(a[0], a[1]), b[0], b[1])", "std::array<double, 4>{A[1], A[0], B[0], B[1]}[i]"},
		{"row_not_column", "m[1]", "M(i, 1)"},
		{"vec_times_mat_as_mat_times_vec", "b * m", "M(0, i) * B[0] + M(1, i) * B[1] + M(2, i) * B[2] + M(3, i) * B[3]"},
		{"right", "tanh(a)", "std::tanh(A[i])"},
	}
	bad := runLaneTable(t, broken)
	for _, r := range broken {
		if want := r.name != "right"; bad[r.name] != want {
			t.Errorf("row %s: reported %v, want %v", r.name, bad[r.name], want)
		}
	}
}
