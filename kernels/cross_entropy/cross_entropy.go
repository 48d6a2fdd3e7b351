package crossentropy

// cross_entropy: fused forward loss and backward gradient of the softmax
// cross entropy, one group per row of logits:
//   lse = log Σ_j exp(x_j);  loss = lse − x_t;  dX_j = exp(x_j − lse) − [j = t]
// where t is the row's target. Rows whose target equals pad_id are ignored:
// loss 0 and dX 0. dX is the gradient of the summed loss (reduction "sum";
// a mean is the same kernel times 1/n).
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "cross_entropy", entry "cross_entropy".
//   dims: rows (1..1<<20, default 4096), vocab (2..1<<18, default 32000),
//     pad_id (-1..1<<18, default 0; -1: no padding; must be < vocab).
//   knobs: WG ∈ {32,…,1024} threads per group (default 512), VEC ∈ {1,2,4,8}
//     elements per vector access (default 8; VEC·sizeof(T) ≤ 16, vocab % VEC == 0).
//     CL ∈ {0,1,2,4,8} (default 0; CUDA only for CL ≥ 1, sm_90 for CL > 1):
//     0 is the two-pass kernel below; CL ≥ 1 splits each row over CL groups
//     (a thread-block cluster), each staging its ceil((vocab/VEC)/CL)
//     vectors of the row in shared memory (cp.async, so VEC·sizeof(T) ≥ 4):
//     one read of the logits, whatever the vocab; the groups exchange their
//     (max, Σexp) pairs over distributed shared memory.
//   buffers: logits [rows, vocab] T in (normal, scale 2), targets [rows] i32 in
//     (ints in [0, vocab)), loss [rows] f32 out (poison), dlogits [rows, vocab]
//     T out (poison).
//   dispatch "cross_entropy": grid (rows·max(CL,1),1,1), group (WG,1,1); Args
//     logits, targets, loss, dlogits; Scalars (i32 rows, i32 vocab, i32
//     pad_id); Macros WG, VEC, CL, DTYPE.
//   Two passes over the row: an online (max, Σexp) per thread, merged per
//   warp by shuffles and across warps through red_smem; then dX is written
//   (the CUDA kernel keeps each thread's first ~32 elements in registers
//   between the passes and re-reads the rest, last-read first).
//   TGM items: red_smem 2·(WG/32)·4 bytes (per-warp max and sum); with
//     CL > 1 xch_smem 8 bytes (the group's pair, read by its peers); with
//     CL ≥ 1 chunk_smem ceil((vocab/VEC)/CL)·VEC·sizeof(T) bytes (the
//     dispatch's DynamicTGM).
//   FLOPs 8 per element (exp counted as one); bytes 2·rows·vocab·sz + 8·rows
//   (logits read once, dlogits written once, targets and loss: the minimum;
//   with CL = 0 the second read of a row is meant to hit the L2).

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

func init() { profiler.Register(CrossEntropy{}) }

var _ profiler.Family = CrossEntropy{}

// CrossEntropy is the fused cross-entropy forward+backward family.
type CrossEntropy struct{}

// Name is the family name.
func (CrossEntropy) Name() string { return "cross_entropy" }

// Doc is the one-line description.
func (CrossEntropy) Doc() string {
	return "fused cross entropy: per-row loss and dlogits = softmax − onehot in one kernel, pad rows ignored (memory-bound)"
}

// Schema lists knobs, dims and dtypes.
func (CrossEntropy) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "WG", Doc: "threads per group (one group per row)", Default: 512, Values: kit.WGValues},
			{Name: "VEC", Doc: "elements per vector load/store (VEC·sizeof(T) ≤ 16 bytes)", Default: 8, Values: []int{1, 2, 4, 8},
				ByDType: map[profiler.DType]int{profiler.F32: 4}},
			{Name: "CL", Doc: "groups per row, each staging its share in shared memory (a cluster; 0: one group, two passes; CUDA only)", Default: 0, Values: []int{0, 1, 2, 4, 8}},
		},
		Dims: []profiler.Param{
			{Name: "rows", Doc: "rows (tokens)", Default: 4096, Min: 1, Max: 1 << 20},
			{Name: "vocab", Doc: "classes per row", Default: 32000, Min: 2, Max: 1 << 18},
			{Name: "pad_id", Doc: "target id whose rows are ignored (-1: none)", Default: 0, Min: -1, Max: 1 << 18},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// CrossEntropyTGM is the per-warp max and sum, and with cl ≥ 1 the group's
// share of the row (chunk vectors of vecBytes) and, with cl > 1, the pair
// its cluster peers read.
func CrossEntropyTGM(wg, cl, chunk, vecBytes int) []profiler.TGMItem {
	items := []profiler.TGMItem{{Name: "red_smem", Bytes: 2 * (wg / 32) * 4, Note: "2·WG/32 f32: per-warp running max and Σexp"}}
	if cl > 1 {
		items = append(items, profiler.TGMItem{Name: "xch_smem", Bytes: 8, Note: "the group's (max, Σexp), read by the cluster over DSMEM"})
	}
	if cl >= 1 {
		items = append(items, profiler.TGMItem{Name: "chunk_smem", Bytes: chunk * vecBytes, Note: fmt.Sprintf("%d vectors of the row: ceil(vocab/VEC/CL) (dynamic)", chunk)})
	}
	return items
}

func (CrossEntropy) dispatch(s profiler.Spec) profiler.Dispatch {
	rows, vocab, wg, vec, cl := s.Dims["rows"], s.Dims["vocab"], s.Knobs["WG"], s.Knobs["VEC"], s.Knobs["CL"]
	return profiler.Dispatch{
		Name: "cross_entropy",
		Program: profiler.Program{Source: "cross_entropy", Entry: "cross_entropy", Macros: []profiler.Macro{
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "VEC", Value: strconv.Itoa(vec)},
			{Name: "CL", Value: strconv.Itoa(cl)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}},
		Grid:    [3]int{rows * max(cl, 1), 1, 1},
		Group:   [3]int{wg, 1, 1},
		Args:    []string{"logits", "targets", "loss", "dlogits"},
		Scalars: []profiler.Scalar{profiler.I32Param("rows", rows), profiler.I32Param("vocab", vocab), profiler.I32Param("pad_id", s.Dims["pad_id"])},
		TGM:     CrossEntropyTGM(wg, cl, kit.CeilDiv(vocab/vec, max(cl, 1)), vec*s.DType.Size()),
		// The chunk is the dynamic part; without CL it is 0 (no dynamic TGM).
		DynamicTGM: min(cl, 1) * kit.CeilDiv(vocab/vec, max(cl, 1)) * vec * s.DType.Size(),
	}
}

// Validate applies the vector, pad, thread and index rules.
func (f CrossEntropy) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"WG", "VEC"}, []string{"rows", "vocab"}); err != nil {
		return err
	}
	vocab := s.Dims["vocab"]
	if err := kit.CheckVec(s.Knobs["VEC"], s.DType, vocab, "vocab"); err != nil {
		return err
	}
	if p := s.Dims["pad_id"]; p >= vocab {
		return fmt.Errorf("pad_id=%d is not a class of vocab=%d: use -1 (no padding) or an id below %d", p, vocab, vocab)
	}
	if err := kit.CheckIndexRange(map[string]int64{"logits/dlogits": int64(s.Dims["rows"]) * int64(vocab)}); err != nil {
		return err
	}
	if cl := s.Knobs["CL"]; cl != 0 {
		if !dev.Has(profiler.FeatureCUDAKernels) || !dev.Has(profiler.FeatureCPAsync) {
			return fmt.Errorf("CL=%d stages the row in shared memory with cp.async and clusters, which only the CUDA kernel does: set CL=0 on %s", cl, dev.Backend)
		}
		if cl > 1 && !dev.Has(profiler.FeatureClusters) {
			return fmt.Errorf("CL=%d groups per row form a thread-block cluster, which needs sm_90 (this device is %s): use CL ≤ 1", cl, dev.Arch)
		}
		if vb := s.Knobs["VEC"] * s.DType.Size(); vb < 4 {
			return fmt.Errorf("VEC=%d %s elements are %d bytes, less than the 4 bytes cp.async moves: with CL ≥ 1 use VEC ≥ %d", s.Knobs["VEC"], s.DType, vb, 4/s.DType.Size())
		}
	}
	d := f.dispatch(s)
	return kit.CheckGroup(&d, dev, "lower WG", "raise CL: each group stages ceil(vocab/VEC/CL) vectors of the row")
}

// Plan builds buffers, the dispatch, FLOPs and bytes.
func (f CrossEntropy) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	rows, vocab := int64(s.Dims["rows"]), int64(s.Dims["vocab"])
	n := rows * vocab
	t := s.DType
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "logits", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitNormal, Scale: 2},
			{Name: "targets", Role: profiler.In, Type: profiler.I32, Elems: rows, Init: profiler.InitInts, Lo: 0, Hi: float64(vocab)},
			{Name: "loss", Role: profiler.Out, Type: profiler.F32, Elems: rows, Init: profiler.InitPoison},
			{Name: "dlogits", Role: profiler.Out, Type: t, Elems: n, Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{f.dispatch(s)},
		FLOPs:      8 * float64(n),
		Bytes:      2*float64(n)*float64(t.Size()) + 8*float64(rows),
	}
	if s.Dims["pad_id"] >= 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("targets are uniform in [0, %d): about 1 row in %d has the pad id %d and is ignored", vocab, vocab, s.Dims["pad_id"]))
	}
	return p, nil
}

// Reference computes loss and dlogits in float64 for sampled rows.
func (CrossEntropy) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	rowsN, vocab, pad := s.Dims["rows"], s.Dims["vocab"], s.Dims["pad_id"]
	if err := kit.NeedInputs(in, map[string]int{"logits": rowsN * vocab, "targets": rowsN}); err != nil {
		return nil, err
	}
	x, tg := in["logits"], in["targets"]
	rows := profiler.SampleRows(rowsN, maxRows, seed)
	idx := make([]int, len(rows)*vocab)
	want := make([]float64, len(rows)*vocab)
	lIdx := make([]int, len(rows))
	lWant := make([]float64, len(rows))
	gd := kit.NewGrowth(vocab, len(want), kit.ExpEps)
	gl := kit.NewGrowth(vocab, len(rows), kit.ExpEps)
	kit.ParallelRows(len(rows), func(n int) {
		r := rows[n]
		off := r * vocab
		lWant[n], gl.Mag[n] = crossEntropyRow(x[off:off+vocab], int(tg[r]), pad, want[n*vocab:(n+1)*vocab], gd.Mag[n*vocab:(n+1)*vocab])
		lIdx[n] = r
		for c := range vocab {
			idx[n*vocab+c] = off + c
		}
	})
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "loss", Index: lIdx, Want: lWant, Growth: gl},
			{Buffer: "dlogits", Index: idx, Want: want, Growth: gd, Dims: []int{rowsN, vocab}},
		},
		RowsChecked: len(rows),
		RowsTotal:   rowsN,
		Rows:        profiler.DescribeRows(rows, rowsN, seed),
	}, nil
}

// crossEntropyRow writes, for one row in float64, dX into dx and the
// magnitude each dX is formed from into mag, and returns the loss and its
// magnitude; a row whose target is pad gets zeros. The row's logsumexp
// sums vocab positive terms, so its absolute error is about
// (ExpEps + eps·√vocab) plus the rounding of m + log(sum); p_c =
// exp(x_c − lse) carries that error relative to p_c: mag_c =
// p_c·(2 + |lse| + |x_c|), and the loss's is 1 + |lse| + |x_t|.
func crossEntropyRow(x []float32, target, pad int, dx, mag []float64) (loss, lossMag float64) {
	if target == pad {
		clear(dx)
		clear(mag)
		return 0, 0
	}
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - m)
	}
	lse := m + math.Log(sum)
	for c, v := range x {
		p := math.Exp(float64(v) - lse)
		dx[c] = p
		mag[c] = p * (2 + math.Abs(lse) + math.Abs(float64(v)))
	}
	dx[target]--
	return lse - float64(x[target]), 1 + math.Abs(lse) + math.Abs(float64(x[target]))
}

// CrossEntropyTolerances: the probabilities are small (about 1/vocab), so
// the ATol is far below the default; the RTol covers rounding dX once.
var CrossEntropyTolerances = map[profiler.DType]profiler.Tolerance{
	profiler.F32:  {ATol: 1e-7, RTol: 1e-4},
	profiler.F16:  {ATol: 1e-7, RTol: 5e-3},
	profiler.BF16: {ATol: 1e-7, RTol: 2e-2},
}

// Tolerance is the pass criterion for dtype d.
func (CrossEntropy) Tolerance(d profiler.DType) profiler.Tolerance {
	return kit.PickTol(CrossEntropyTolerances, d)
}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (CrossEntropy) Examples() []profiler.Spec {
	return []profiler.Spec{
		{Kernel: "cross_entropy", DType: profiler.F32, Knobs: map[string]int{"WG": 64, "VEC": 2}, Dims: map[string]int{"rows": 12, "vocab": 6, "pad_id": 1}},
		{Kernel: "cross_entropy", DType: profiler.BF16, Knobs: map[string]int{"WG": 32, "VEC": 4}, Dims: map[string]int{"rows": 3, "vocab": 500, "pad_id": -1}},
	}
}
