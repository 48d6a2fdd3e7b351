package scaffold

import "testing"

// A tile kernel bounded to 128 threads and launched with a 32 × 4 block,
// with a shared array left in a comment, as a user wrote it.
const boundedTileProgram = `__global__ void __launch_bounds__(128) tile_copy(const float* x, float* y, int rows, int cols) {
    __shared__ float tile[4][33];
    // __shared__ float spare[64];
    /* __shared__ float old_tile[128]; */
    int r = blockIdx.x * 4 + threadIdx.y;
    int c = threadIdx.x;
    if (r < rows && c < cols) tile[threadIdx.y][c] = x[r * cols + c];
    __syncthreads();
    if (r < rows && c < cols) y[r * cols + c] = tile[threadIdx.y][c];
}
void launch(const float* x, float* y, int rows, int cols) {
    dim3 block(32, 4);
    tile_copy<<<(rows + 3) / 4, block>>>(x, y, rows, cols);
}
`

// A literal 2-D launch block is the threads even beside __launch_bounds__
// (the kernel indexes threadIdx.y), and a shared array in a comment is
// none of the kernel's.
func TestScaffoldBoundedTwoDimBlock(t *testing.T) {
	res, err := Manifest(Request{Name: "tile", SrcPath: "k.cu", Src: boundedTileProgram})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"threads: [32, 4, 1]", `grid: ["(rows + 3) / 4", 1, 1]`, "{name: tile, bytes: \"528\"}"},
		[]string{"WG", "spare", "old_tile"})
	checkNotesHaveTODOs(t, res)
	checkCompiles(t, res.Text, "k.cu", boundedTileProgram)
}
