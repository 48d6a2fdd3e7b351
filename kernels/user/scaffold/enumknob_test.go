package scaffold

import (
	"testing"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// A combine step picked by an enum template parameter, as a user wrote it.
const combineEnumCUDA = `enum Combine { ADD, TAKE_MAX, TAKE_MIN };

template <typename T, Combine OP>
__global__ void combine(T* out, const T* a, const T* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (OP == ADD) out[i] = a[i] + b[i];
    else if (OP == TAKE_MAX) out[i] = a[i] > b[i] ? a[i] : b[i];
    else out[i] = a[i] < b[i] ? a[i] : b[i];
}
`

// A scoped enum with explicit values and a default.
const scaledEnumCUDA = `namespace q {
enum class Bits : int { FOUR = 4, EIGHT = FOUR * 2, SIXTEEN = 16 };
}
template <typename T, q::Bits B = q::Bits::EIGHT>
__global__ void quant(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (T)(1 << (int)B);
}
`

// A template parameter of an enum type is a knob of the enumerators'
// values, named in its doc, defaulting to the first (or to the
// parameter's default); the manifest compiles.
func TestScaffoldEnumTemplateKnob(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want, not []string
	}{
		{name: "unscoped", src: combineEnumCUDA,
			want: []string{`OP: {values: [0, 1, 2], default: 0, doc: "Combine 0 ADD, 1 TAKE_MAX, 2 TAKE_MIN"}`, `"combine<T, OP>"`},
			not:  []string{"the one value", "values: [1]"}},
		{name: "scoped, valued, defaulted", src: scaledEnumCUDA,
			want: []string{`B: {values: [4, 8, 16], default: 8, doc: "q::Bits 4 FOUR, 8 EIGHT, 16 SIXTEEN"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "en", SrcPath: "k.cu", Src: tc.src})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, tc.want, tc.not)
			checkNotesHaveTODOs(t, res)
			checkCompiles(t, res.Text, "k.cu", tc.src)
		})
	}
}

func TestEnumValues(t *testing.T) {
	for _, tc := range []struct {
		src, name string
		want      []enumerator // nil: not read
	}{
		{"enum E { A, B, C };", "E", []enumerator{{"A", 0}, {"B", 1}, {"C", 2}}},
		{"enum E { A = 2, B, C = A + 8, };", "E", []enumerator{{"A", 2}, {"B", 3}, {"C", 10}}},
		{"enum class E : uint8_t { A = 0x10, B };", "ns::E", []enumerator{{"A", 16}, {"B", 17}}},
		{"enum E; enum E { A = f(1) };", "E", nil}, // a value mltop cannot compute
		{"enum F { A };", "E", nil},
	} {
		got, ok := enumValues(csrc.Tokenize(tc.src), tc.name)
		if ok != (tc.want != nil) || len(got) != len(tc.want) {
			t.Errorf("%s: enumValues(%s) = %v, %v; want %v", tc.src, tc.name, got, ok, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: enumerator %d = %v, want %v", tc.src, i, got[i], tc.want[i])
			}
		}
	}
}
