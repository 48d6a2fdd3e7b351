package transpose

// transpose: Y = Xᵀ for a 2-D tensor, through a padded tile in threadgroup
// memory so that both the read of X and the write of Y are coalesced.
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "transpose", entry "transpose".
//   dims: rows (1..1<<20, default 8192), cols (1..1<<20, default 8192).
//   knobs: TILE ∈ {16, 32, 64} (square tile edge, default 64), WG ∈ {32, 64,
//     128, 256, 512, 1024} (threads per group, default 256), VEC ∈ {1, 2, 4}
//     (adjacent elements per access along the contiguous dimension, default
//     2; VEC·sizeof(T) ≤ 16). A tile row is TV = TILE/VEC vectors; WG must be
//     a multiple of TV and divide TILE·TV (each step moves WG/TV whole tile
//     rows). Vector accesses need cols % VEC == 0 (reads) and rows % VEC == 0
//     (writes); otherwise the kernels fall back to one element per access.
//   buffers: X [rows, cols] T in (normal), Y [cols, rows] T out (poison).
//   dispatch "transpose": grid (ceil(cols/TILE), ceil(rows/TILE), 1), group
//     (WG,1,1); Args X, Y; Scalars (i32 rows, i32 cols); Macros TILE, WG, VEC,
//     DTYPE.
//     Group (x, y) reads X rows [y·TILE, …) × cols [x·TILE, …) and writes Y
//     rows [x·TILE, …) × cols [y·TILE, …).
//   TGM items: tile_smem TILE·(TILE+1)·4 bytes (the tile in f32, one float
//     of padding per row so that the column read is free of bank conflicts).
//   FLOPs 0; bytes 2·rows·cols·sz (read X once, write Y once).

import (
	"fmt"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

func init() { profiler.Register(Transpose{}) }

var _ profiler.Family = Transpose{}

// Transpose is the 2-D transpose family.
type Transpose struct{}

// Name is the family name.
func (Transpose) Name() string { return "transpose" }

// Doc is the one-line description.
func (Transpose) Doc() string {
	return "2-D transpose Y = Xᵀ through a padded TILE×TILE tile in TGM (memory-bound: report GB/s)"
}

// Schema lists knobs, dims and dtypes.
func (Transpose) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "TILE", Doc: "square tile edge staged through TGM", Default: 64, Values: []int{16, 32, 64}},
			{Name: "WG", Doc: "threads per group; each moves TILE·TILE/WG elements", Default: 256, Values: kit.WGValues},
			{Name: "VEC", Doc: "adjacent elements per access (VEC·sizeof(T) ≤ 16 bytes)", Default: 2, Values: []int{1, 2, 4}},
		},
		Dims: []profiler.Param{
			{Name: "rows", Doc: "rows of X (columns of Y)", Default: 8192, Min: 1, Max: 1 << 20},
			{Name: "cols", Doc: "columns of X (rows of Y)", Default: 8192, Min: 1, Max: 1 << 20},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// TransposeTGM is the padded f32 tile.
func TransposeTGM(tile int) []profiler.TGMItem {
	return []profiler.TGMItem{{Name: "tile_smem", Bytes: tile * (tile + 1) * 4, Note: "TILE×(TILE+1) f32: one float of padding per row against bank conflicts"}}
}

func (Transpose) dispatch(s profiler.Spec) profiler.Dispatch {
	rows, cols, tile, wg, vec := s.Dims["rows"], s.Dims["cols"], s.Knobs["TILE"], s.Knobs["WG"], s.Knobs["VEC"]
	return profiler.Dispatch{
		Name: "transpose",
		Program: profiler.Program{Source: "transpose", Entry: "transpose", Macros: []profiler.Macro{
			{Name: "TILE", Value: strconv.Itoa(tile)},
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "VEC", Value: strconv.Itoa(vec)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}},
		Grid:    [3]int{kit.CeilDiv(cols, tile), kit.CeilDiv(rows, tile), 1},
		Group:   [3]int{wg, 1, 1},
		Args:    []string{"X", "Y"},
		Scalars: []profiler.Scalar{profiler.I32Param("rows", rows), profiler.I32Param("cols", cols)},
		TGM:     TransposeTGM(tile),
	}
}

// Validate applies the tile, thread, grid and index rules.
func (f Transpose) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"TILE", "WG", "VEC"}, []string{"rows", "cols"}); err != nil {
		return err
	}
	tile, wg, vec := s.Knobs["TILE"], s.Knobs["WG"], s.Knobs["VEC"]
	if vec*s.DType.Size() > 16 {
		return fmt.Errorf("VEC=%d %s elements are %d bytes, more than one 16-byte access: use VEC ≤ %d", vec, s.DType, vec*s.DType.Size(), 16/s.DType.Size())
	}
	tv := tile / vec
	if wg%tv != 0 || (tile*tv)%wg != 0 {
		return fmt.Errorf("WG=%d must be a multiple of TILE/VEC=%d and divide TILE·TILE/VEC=%d: each step a group moves WG/(TILE/VEC) whole tile rows; pick WG in [%d, %d]", wg, tv, tile*tv, tv, tile*tv)
	}
	if err := kit.CheckIndexRange(map[string]int64{"X/Y": int64(s.Dims["rows"]) * int64(s.Dims["cols"])}); err != nil {
		return err
	}
	d := f.dispatch(s)
	if err := kit.CheckGrid(&d, dev, "raise TILE or reduce rows"); err != nil {
		return err
	}
	return kit.CheckGroup(&d, dev, "lower WG", "lower TILE")
}

// Plan builds buffers, the dispatch and the byte model.
func (f Transpose) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	n := int64(s.Dims["rows"]) * int64(s.Dims["cols"])
	t := s.DType
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "X", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitNormal, Scale: 1},
			{Name: "Y", Role: profiler.Out, Type: t, Elems: n, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
		Bytes:      2 * float64(n) * float64(t.Size()),
		Notes:      []string{"no arithmetic: judge it by GB/s against the device's copy bandwidth"},
	}, nil
}

// Reference checks whole rows of Y (= columns of X): exact copies.
func (Transpose) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	rowsN, cols := s.Dims["rows"], s.Dims["cols"]
	if err := kit.NeedInputs(in, map[string]int{"X": rowsN * cols}); err != nil {
		return nil, err
	}
	x := in["X"]
	// The rows of Y are the columns of X.
	yRows := profiler.SampleRows(cols, maxRows, seed)
	idx := make([]int, 0, len(yRows)*rowsN)
	want := make([]float64, 0, len(yRows)*rowsN)
	for _, c := range yRows {
		for r := range rowsN {
			idx = append(idx, c*rowsN+r)
			want = append(want, float64(x[r*cols+c]))
		}
	}
	return &profiler.Reference{
		Checks:      []profiler.Check{{Buffer: "Y", Index: idx, Want: want, Dims: []int{cols, rowsN}}}, // exact: no growth
		RowsChecked: len(yRows),
		RowsTotal:   cols,
		Rows:        profiler.DescribeRows(yRows, cols, seed) + " of Y",
	}, nil
}

// Tolerance is exact: a transpose copies bits.
func (Transpose) Tolerance(profiler.DType) profiler.Tolerance { return profiler.Tolerance{} }

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (Transpose) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "transpose", DType: profiler.F16, Knobs: map[string]int{"TILE": 16, "WG": 64}, Dims: map[string]int{"rows": 37, "cols": 50}}}
}
