package scaffold

import "testing"

// Launches whose chevrons a formatter spaced apart (`<< <`, `>> >`), as
// nvcc accepts them.
const spacedLaunchProgram = `#define CH 3
template <int C>
__global__ void shade(const float* in, float* out, int P) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < P) for (int c = 0; c < C; c++) out[i * C + c] = 2.0f * in[i * C + c];
}
void launch(const float* in, float* out, int P) {
    shade<CH> << <(P + 127) / 128, 128 >> > (in, out, P);
}
`

// A spaced launch is read as the launch it is: its template argument
// (the macro's value, not the one-value guess 1), its block and its grid.
func TestScaffoldSpacedChevrons(t *testing.T) {
	for _, src := range []string{spacedLaunchProgram, joinLaunchChevrons(spacedLaunchProgram)} {
		res, err := Manifest(Request{Name: "shade", SrcPath: "k.cu", Src: src})
		if err != nil {
			t.Fatal(err)
		}
		manifestSays(t, res.Text, []string{"C: {values: [3], default: 3}", `grid: ["(P + 127) / 128", 1, 1]`, "threads: [WG, 1, 1]", "WG: {values: [128], default: 128"},
			[]string{"values: [1]"})
	}
	if got, want := joinLaunchChevrons("k<< <g, b >> >(x); a << b; v<w<int>> > z;"), "k<<< g, b >>> (x); a << b; v<w<int>> > z;"; got != want {
		t.Errorf("joinLaunchChevrons: %q, want %q", got, want)
	}
}
