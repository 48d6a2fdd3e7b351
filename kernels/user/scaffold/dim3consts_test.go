package scaffold

import (
	"strings"
	"testing"
)

// A grouped dot product launched with a 2-D block of file constants,
// taking a group size the launch passes apart from its block.
const groupedDotProgram = `const int TILE_X = 32;
#define TILE_Y 2
__global__ void grouped_dot(const float* x, const float* scale, float* out, int rows, int cols, int groupsize) {
    int c = blockIdx.x * TILE_X + threadIdx.x;
    int r = blockIdx.y * TILE_Y + threadIdx.y;
    if (r >= rows || c >= cols) return;
    out[r * cols + c] = x[r * cols + c] * scale[(c / groupsize) * rows + r];
}
void launch(const float* x, const float* scale, float* out, int rows, int cols, const Opts* o) {
    dim3 threads(TILE_X, TILE_Y * 1, 1);
    dim3 blocks((cols + threads.x - 1) / threads.x, (rows + threads.y - 1) / threads.y);
    grouped_dot<<<blocks, threads>>>(x, scale, out, rows, cols, o->groupsize);
}
`

// A 2-D block of file constants (a const int, a #define, an expression
// of them) is the threads, its .x and .y the grid's; a block-like
// parameter (groupsize) the launch does not give the block is a dim, not
// the threads knob. The same parameter launched as the block stays the
// knob.
func TestScaffoldDim3OfConstants(t *testing.T) {
	res, err := Manifest(Request{Name: "gdot", SrcPath: "k.cu", Src: groupedDotProgram})
	if err != nil {
		t.Fatal(err)
	}
	manifestSays(t, res.Text, []string{"threads: [32, 2, 1]", `grid: ["(cols + 32 - 1) / 32", "(rows + 2 - 1) / 2", 1]`, "  groupsize: {default:"},
		[]string{"WG", "doc: threads per group", "dim3 threads(TILE_X"})
	checkNotesHaveTODOs(t, res)

	for _, launch := range []string{
		"grouped_dot<<<rows, groupsize>>>(x, scale, out, rows, cols, groupsize);",
		"grouped_dot<<<rows, gs>>>(x, scale, out, rows, cols, gs);",
		"dim3 b(gs); grouped_dot<<<rows, b>>>(x, scale, out, rows, cols, b.x);",
	} {
		src := groupedDotProgram[:strings.Index(groupedDotProgram, "    dim3 threads")] + "    " + launch + "\n}\n"
		src = strings.Replace(src, "const Opts* o", "int groupsize, int gs", 1)
		res, err := Manifest(Request{Name: "gdot", SrcPath: "k.cu", Src: src})
		if err != nil {
			t.Fatal(err)
		}
		manifestSays(t, res.Text, []string{"groupsize: {values: [32, 64, 128, 256, 512, 1024]", "threads: [groupsize, 1, 1]"}, nil)
	}
}
