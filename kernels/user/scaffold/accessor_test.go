package scaffold

import "testing"

// accessorCUDA takes its tensors as PyTorch packed accessors by value, as
// pytorch3d's ball query does, and writes two of them by chained indexing.
const accessorCUDA = `#include <ATen/ATen.h>
template <typename scalar_t>
__global__ void near(const at::PackedTensorAccessor64<scalar_t, 3, at::RestrictPtrTraits> p,
                     const at::PackedTensorAccessor64<int64_t, 1, at::RestrictPtrTraits> lengths,
                     at::PackedTensorAccessor64<int64_t, 3, at::RestrictPtrTraits> idxs,
                     at::PackedTensorAccessor64<scalar_t, 3, at::RestrictPtrTraits> dists,
                     const int64_t K) {
  const int64_t n = blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= lengths[n]) return;
  for (int64_t k = 0; k < K && k < p.size(1); ++k) {
    idxs[n][i][k] = k;
    dists[n][i][k] = p[n][i][0] - p[n][k][0];
  }
}
`

// `mltop new` makes each packed accessor a buffer of its rank (the guessed
// size, then 1s), reads chained element writes as outputs, and writes a
// manifest that loads and compiles.
func TestScaffoldPackedAccessors(t *testing.T) {
	res, err := Manifest(Request{Name: "acc", SrcPath: "near.cu", Src: accessorCUDA})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{
		"{name: p, dtype: scalar_t, shape: [",
		", 1, 1], init:", "a packed accessor of rank 3: give its 3 sizes",
		"{name: lengths, dtype: i64, shape: [",
		"{name: idxs, dtype: i64, shape: [", "{name: dists, dtype: scalar_t, shape: [",
		"args: [p, lengths, idxs, dists, K]",
	}, []string{"no buffer is visibly written", "not const but only read"})
	checkCompiles(t, res.Text, "near.cu", accessorCUDA)
}
