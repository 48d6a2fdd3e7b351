package softmaxbwd

import (
	"math"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

// SoftmaxBwd is the softmax backward over rows: dX = Y·(dY − Σ dY·Y), one
// threadgroup per row reducing the dot product with a threadgroup tree.
type SoftmaxBwd struct{}

// Name is the family name.
func (SoftmaxBwd) Name() string { return "softmax_bwd" }

// Doc is the one-line description.
func (SoftmaxBwd) Doc() string {
	return "softmax backward per row: dX = Y·(dY − Σ dY·Y), one threadgroup per row, tree reduction in TGM"
}

// Schema lists knobs, dims and dtypes.
func (SoftmaxBwd) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "WG", Doc: "threads per group (one group per row)", Default: 256, Values: []int{32, 64, 128, 256, 512, 1024}},
		},
		Dims: []profiler.Param{
			{Name: "rows", Doc: "rows (one threadgroup each)", Default: 4096, Min: 1, Max: 1 << 24},
			{Name: "cols", Doc: "softmax width", Default: 4096, Min: 1, Max: 1 << 20},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// SoftmaxBwdTGM is the per-warp partial sums of the tree reduction.
func SoftmaxBwdTGM(wg int) []profiler.TGMItem {
	return []profiler.TGMItem{{Name: "red_smem", Bytes: wg / 32 * 4, Note: "WG/32 f32: one partial Σ dY·Y per warp"}}
}

func (SoftmaxBwd) dispatch(s profiler.Spec) profiler.Dispatch {
	rows, cols, wg := s.Dims["rows"], s.Dims["cols"], s.Knobs["WG"]
	return profiler.Dispatch{
		Name: "softmax_bwd",
		Program: profiler.Program{Source: "softmax_bwd", Entry: "softmax_bwd", Macros: []profiler.Macro{
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}},
		Grid:    [3]int{rows, 1, 1},
		Group:   [3]int{wg, 1, 1},
		Args:    []string{"Y", "dY", "dX"},
		Scalars: []profiler.Scalar{profiler.I32Param("rows", rows), profiler.I32Param("cols", cols)},
		TGM:     SoftmaxBwdTGM(wg),
	}
}

// Validate applies the thread, TGM and index-range rules.
func (f SoftmaxBwd) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"WG"}, []string{"rows", "cols"}); err != nil {
		return err
	}
	rows, cols := s.Dims["rows"], s.Dims["cols"]
	if err := kit.CheckIndexRange(map[string]int64{"Y/dY/dX": int64(rows) * int64(cols)}); err != nil {
		return err
	}
	d := f.dispatch(s)
	return kit.CheckGroup(&d, dev, "lower WG", "lower WG")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f SoftmaxBwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	n := int64(s.Dims["rows"]) * int64(s.Dims["cols"])
	t := s.DType
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "Y", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitUniform, Lo: 0, Hi: 1},
			{Name: "dY", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitNormal, Scale: 1},
			{Name: "dX", Role: profiler.Out, Type: t, Elems: n, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
		FLOPs:      4 * float64(n),
		Bytes:      3 * float64(n) * float64(t.Size()),
	}, nil
}

// Reference computes dX in float64 for sampled rows.
func (SoftmaxBwd) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	rowsN, cols := s.Dims["rows"], s.Dims["cols"]
	if err := kit.NeedInputs(in, map[string]int{"Y": rowsN * cols, "dY": rowsN * cols}); err != nil {
		return nil, err
	}
	rows := profiler.SampleRows(rowsN, maxRows, seed)
	idx := make([]int, len(rows)*cols)
	want := make([]float64, len(rows)*cols)
	gr := kit.NewGrowth(cols, len(want), 0)
	y, dy := in["Y"], in["dY"]
	kit.ParallelRows(len(rows), func(n int) {
		off := rows[n] * cols
		SoftmaxBwdRow(y[off:off+cols], dy[off:off+cols], want[n*cols:(n+1)*cols])
		SoftmaxBwdMag(y[off:off+cols], dy[off:off+cols], gr.Mag[n*cols:(n+1)*cols])
		for c := range cols {
			idx[n*cols+c] = off + c
		}
	})
	return &profiler.Reference{
		Checks:      []profiler.Check{{Buffer: "dX", Index: idx, Want: want, Growth: gr, Dims: []int{rowsN, cols}}},
		RowsChecked: len(rows),
		RowsTotal:   rowsN,
		Rows:        profiler.DescribeRows(rows, rowsN, seed),
	}, nil
}

// SoftmaxBwdRow is the float64 softmax backward of one row into dx.
func SoftmaxBwdRow(y, dy []float32, dx []float64) {
	var dot float64
	for c := range y {
		dot += float64(dy[c]) * float64(y[c])
	}
	for c := range y {
		dx[c] = float64(y[c]) * (float64(dy[c]) - dot)
	}
}

// SoftmaxBwdMag sets mag[c] to the magnitude dX[c] is formed from:
// |Y_c|·(|dY_c| + R), R the kit.SumMag of the row's dot product Σ Y·dY
// over cols terms, the reduction.
func SoftmaxBwdMag(y, dy []float32, mag []float64) {
	var sum, abs, sq float64
	for c := range y {
		t := float64(dy[c]) * float64(y[c])
		sum, abs, sq = sum+t, abs+math.Abs(t), sq+t*t
	}
	r := kit.SumMag(sum, abs, sq)
	for c := range y {
		mag[c] = math.Abs(float64(y[c])) * (math.Abs(float64(dy[c])) + r)
	}
}

// Tolerance is the default per-dtype tolerance: the row sum is accumulated
// in f32 and its error stays far below rtol·|dX| for Y in [0, 1].
func (SoftmaxBwd) Tolerance(d profiler.DType) profiler.Tolerance {
	if t, ok := profiler.DefaultTolerances[d]; ok {
		return t
	}
	return profiler.DefaultTolerances[profiler.F32]
}

func init() { profiler.Register(SoftmaxBwd{}) }

var _ profiler.Family = SoftmaxBwd{}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (SoftmaxBwd) Examples() []profiler.Spec {
	return []profiler.Spec{
		{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 5, "cols": 300}},
		{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 256}, Dims: map[string]int{"rows": 3, "cols": 1000}},
		{Kernel: "softmax_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 32}, Dims: map[string]int{"rows": 4, "cols": 77}},
	}
}
