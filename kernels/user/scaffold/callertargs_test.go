package scaffold

import "testing"

// A kernel launched from a function template with that template's type
// parameters (Megatron's dispatch_…_forward<input_t, output_t, acc_t>
// launching k<input_t, output_t, acc_t, 0>) takes the fixed C types a
// call of the launcher passes (dispatch_…<scalar_t, scalar_t, float>):
// acc_t is float, not the dtype; a parameter the call leaves to the
// dtype (scalar_t) stays the dtype.
func TestScaffoldTemplateArgsFromTheLaunchersCaller(t *testing.T) {
	src := `template <typename input_t, typename output_t, typename acc_t, int L2>
__global__ void soft(output_t *dst, const input_t *src, const acc_t scale, int rows) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows) dst[i] = (output_t)((acc_t)src[i] * scale);
}

template <typename input_t, typename output_t, typename acc_t>
void dispatch_soft(output_t *dst, const input_t *src, const input_t scale, int rows) {
  soft<input_t, output_t, acc_t, 0><<<(rows + 127) / 128, 128>>>(dst, src, scale, rows);
}

void fwd(float *y, const float *x, int rows) {
  dispatch_soft<scalar_t, scalar_t, float>(y, x, 1.0f, rows);
}
`
	res, err := Manifest(Request{Name: "soft", SrcPath: "/w/soft.cu", Src: src, Dir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{`entry: "soft<input_t, input_t, float, L2>"`}, []string{"input_t, input_t, input_t"})
}
