package scaffold

import "testing"

// Shapes the comment above a kernel writes (Pointnet2's `// input:
// new_xyz(b, m, 3) xyz(b, n, 3)`, `// output: idx(b, m, nsample)`) are the
// buffers' shapes, each size a literal or the dim its parameter became
// (n is the dim n); a buffer the comment sizes with a name no parameter has,
// and a comment parted from the kernel by code, leave the guess.
func TestScaffoldShapesFromComments(t *testing.T) {
	src := `// input: new_xyz(b, m, 3) xyz(b, n, 3) feats(b, c, npoints)
// output: idx(b, m, nsample)
template <typename T>
__global__ void ball(int b, int n, int m, int nsample,
                     const float *__restrict__ new_xyz, const float *__restrict__ xyz,
                     const float *__restrict__ feats, int *__restrict__ idx) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < b * m) idx[j * nsample] = (int)(new_xyz[j] + xyz[j] + feats[j]);
}

// input: a(n, 4)
int unrelated = 0;
__global__ void other(int n, const float *a, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i];
}
`
	res, err := Manifest(Request{Name: "ball", SrcPath: "/w/ball.cu", Src: src, Dir: "/w", Entries: []string{"ball"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		"{name: new_xyz, dtype: f32, shape: [b, m, 3], init: \"normal(0, 1)\"}   # shape from the comment at line 1",
		"{name: xyz, dtype: f32, shape: [b, n, 3],",
		"{name: idx, dtype: i32, shape: [b, m, nsample], out: true}",
	}, []string{"name: feats, dtype: f32, shape: [b, c"})
	res, err = Manifest(Request{Name: "other", SrcPath: "/w/ball.cu", Src: src, Dir: "/w", Entries: []string{"other"}})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, nil, []string{"shape from the comment", "shape: [n, 4]"})
}
