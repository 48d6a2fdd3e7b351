package scaffold

import (
	"strings"
	"testing"
)

// A kernel with a parameter pack (multi_tensor_apply's `ArgTypes...
// args`): mltop new never names the element type after the pack.
func TestScaffoldPackIsNoDTypeName(t *testing.T) {
	src := `struct Halve { __device__ void operator()(int n, float* y) const { } };
template <typename F, typename... Rest>
__global__ void each(int n, float* y, F fn, Rest... rest) { fn(n, y, rest...); }
`
	res, err := Manifest(Request{Name: "my_k", SrcPath: "/w/k.cu", Src: src, Dir: "/w", Read: readFrom(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "dtype_name: Rest") || strings.Contains(res.Text, "<float, Rest>") {
		t.Errorf("the pack became the dtype name:\n%s", res.Text)
	}
}
