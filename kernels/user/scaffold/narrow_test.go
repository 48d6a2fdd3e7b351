package scaffold

import "testing"

// A dim bound to a parameter or struct field of an integer type narrower
// than 32 bits gets a default that fits the type and a max of its
// largest value: the guessed 1048576 (or 1024) in a char failed the
// default spec's range check ("1024 does not fit in i8").
func TestNarrowIntDims(t *testing.T) {
	const body = " {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < 64) y[i] = x[i];\n}\n"
	for _, c := range []struct {
		name, src string
		want, not []string
	}{
		{"struct fields", "struct P { int n; char mode; unsigned char f; short r; int8_t b; uint16_t w; long big; };\n__global__ void k(const float* x, float* y, P p)" + body,
			[]string{"mode: {default: 64, min: 1, max: 127}   # TODO: default and range; at most 127: mode is char",
				"f: {default: 128, min: 1, max: 255}   # TODO: default and range; at most 255: f is unsigned char",
				"r: {default: 1024, min: 1, max: 32767}", "b: {default: 64, min: 1, max: 127}", "w: {default: 1024, min: 1, max: 65535}",
				"n: {default: 1024, min: 1}   # TODO: default and range\n", "big: {default: 1024, min: 1}   # TODO: default and range\n"}, nil},
		{"the only int parameter, a short", "__global__ void k(const float* x, float* y, short n)" + body,
			[]string{"n: {default: 16384, min: 1, max: 32767}   # TODO: default and range; at most 32767: n is short"}, []string{"1048576"}},
		{"a typedef of a narrow type", "typedef unsigned char byte_t;\n__global__ void k(const float* x, float* y, const byte_t mode, int n)" + body,
			[]string{"mode: {default: 128, min: 1, max: 255}   # TODO: default and range; at most 255: mode is unsigned char"}, nil},
		// broken variant: 32-bit and wider types keep their guesses
		{"an int", "__global__ void k(const float* x, float* y, int n)" + body,
			[]string{"n: {default: 1048576, min: 1}   # TODO: default and range\n"}, []string{"max:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Manifest(Request{Name: "k", SrcPath: "/w/k.cu", Src: c.src, Dir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			manifestSays(t, res.Text, c.want, c.not)
			checkScaffold(t, res.Text, map[string]string{"k.cu": c.src})
		})
	}
}
