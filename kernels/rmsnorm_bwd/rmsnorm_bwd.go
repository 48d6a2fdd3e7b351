package rmsnormbwd

// rmsnorm_bwd: the backward pass of y = x·r·w with r = 1/sqrt(mean(x²)+eps),
// per row of D elements:
//   dX_i = r·w_i·dY_i − x_i·r³/D · Σ_j dY_j·w_j·x_j
//   dW_i = Σ_rows dY_i·x_i·r   (accumulated with float atomics)
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "rmsnorm_bwd", entry "rmsnorm_bwd".
//   dims: rows (1..1<<24, default 4096), D (1..65536, default 4096).
//   knobs: WG ∈ {32,…,1024} threads per group (default 256); VEC ∈ {1,2,4,8}
//     elements per vector access (default 8; VEC·sizeof(T) ≤ 16, D % VEC == 0);
//     RPG ∈ {1,2,4,8,16,32,64} rows per group (default 16): a group keeps its
//     columns' dW partials in registers over its RPG rows and issues one
//     atomic add per column at the end, so atomics are rows/RPG·D in all.
//     RB ∈ {1,2,4,8} rows per batch (default 2; RPG % RB == 0): a group loads
//     RB rows before one combined reduction, so RB rows' loads are in flight
//     and the two barriers are paid once per batch.
//     ST ∈ {0,2,3,4,6,8} row slots of a shared-memory ring (default 0, CUDA
//     only): with ST > 0 the CUDA kernel copies X and dY rows into ST slots
//     of [X | dY] by cp.async (ST/RB batches in flight, no registers held
//     while in flight; ST % RB == 0, ST ≥ 2·RB, VEC·sizeof(T) ≥ 4) and pays
//     one barrier per batch (red_smem double-buffered); ST = 0 keeps the
//     register path (the next batch is loaded into registers). ST > 0 also
//     drops the zero fill dispatch: the launch's first group zeroes dW and
//     raises a flag, and every group adds its partials after it (below).
//     Thread t owns the VEC-wide column vectors t, t+WG, t+2·WG, …: at most
//     32 columns per thread (NIT = ceil(D/(WG·VEC)) steps, NIT·VEC ≤ 32),
//     and NIT·VEC·(2·RB+2) ≤ 128 (X and dY of a batch, W, dW partials).
//   buffers: X [rows, D] T in (normal), W [D] T in (uniform 0.5..1.5),
//     dY [rows, D] T in (normal), dX [rows, D] T out (poison), dW [D] f32 out.
//   dispatches (both timed): "zero_dW" zero-fills dW; "rmsnorm_bwd" grid
//     (ceil(rows/RPG),1,1), group (WG,1,1); Args X, W, dY, dX, dW; Scalars
//     (i32 rows, f32 eps = 1e-5); Macros WG, VEC, RPG, RB, ST, D, DTYPE.
//     With ST > 0: no zero_dW dispatch; a scratch buffer sync [2] i32
//     (zero-initialised once) follows dW in the Args: sync[0] counts the
//     groups started over all launches (launch n hands out tickets n·G …
//     n·G+G−1 for a grid of G), the group with ticket n·G zeroes dW and
//     stores sync[1] = n+1, and each group adds its dW partials once it
//     reads that value: no reset between launches.
//   TGM items: red_smem 2·RB·(WG/32)·4 bytes (per-warp partials of Σx² and
//     Σ dY·w·x of each row of a batch, reduced together), twice that with
//     ST > 0 (two parities); with ST > 0 also ticket_smem 4 bytes (the
//     group's ticket, shared with its threads) and ring_smem ST·2·D·sizeof(T) bytes (the dispatch's
//     DynamicTGM).
//   FLOPs 12 per element; bytes 3·rows·D·sz + D·sz + 4·D (X, dY read, dX
//     written, W read, dW written once: the minimum).

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
)

func init() { profiler.Register(RMSNormBwd{}) }

var _ profiler.Family = RMSNormBwd{}

// RMSNormBwd is the RMSNorm backward family.
type RMSNormBwd struct{}

// RMSNormEps is the epsilon under the square root.
const RMSNormEps = 1e-5

// maxColsPerThread bounds the columns a thread keeps in registers.
const maxColsPerThread = 32

// Name is the family name.
func (RMSNormBwd) Name() string { return "rmsnorm_bwd" }

// Doc is the one-line description.
func (RMSNormBwd) Doc() string {
	return "RMSNorm backward: dX per row (tree reduction) and dW accumulated over rows with float atomics after a zero fill (memory-bound)"
}

// Schema lists knobs, dims and dtypes.
func (RMSNormBwd) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "WG", Doc: "threads per group", Default: 256, Values: kit.WGValues},
			{Name: "VEC", Doc: "elements per vector load/store (VEC·sizeof(T) ≤ 16 bytes)", Default: 8, Values: []int{1, 2, 4, 8},
				ByDType: map[profiler.DType]int{profiler.F32: 4}},
			{Name: "RPG", Doc: "rows per group: dW partials stay in registers over them (fewer atomics)", Default: 16, Values: []int{1, 2, 4, 8, 16, 32, 64}},
			{Name: "RB", Doc: "rows per batch: loaded together, reduced with one pair of barriers", Default: 2, Values: []int{1, 2, 4, 8}},
			{Name: "ST", Doc: "row slots of a cp.async ring in shared memory (0: rows through registers; CUDA only)", Default: 0, Values: []int{0, 2, 3, 4, 6, 8}},
		},
		Dims: []profiler.Param{
			{Name: "rows", Doc: "rows (tokens)", Default: 4096, Min: 1, Max: 1 << 24},
			{Name: "D", Doc: "normalized width (model dim)", Default: 4096, Min: 1, Max: 65536},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// RMSNormBwdTGM is the per-warp partials of the two row sums of each row
// of a batch, and with st > 0 their second parity and the ring of st row
// slots of [X | dY] (d elements each, sz bytes per element).
func RMSNormBwdTGM(wg, rb, st, d, sz int) []profiler.TGMItem {
	if st == 0 {
		return []profiler.TGMItem{{Name: "red_smem", Bytes: 2 * rb * (wg / 32) * 4, Note: "2·RB·WG/32 f32: per-warp Σx² and Σ dY·w·x of each row of a batch"}}
	}
	return []profiler.TGMItem{
		{Name: "red_smem", Bytes: 2 * 2 * rb * (wg / 32) * 4, Note: "2 parities × 2·RB·WG/32 f32: per-warp Σx² and Σ dY·w·x of each row of a batch"},
		{Name: "ticket_smem", Bytes: 4, Note: "the group's ticket: the launch's first zeroes dW"},
		{Name: "ring_smem", Bytes: st * 2 * d * sz, Note: fmt.Sprintf("ST=%d row slots of [X | dY], 2·D elements each (dynamic)", st)},
	}
}

func (RMSNormBwd) dispatches(s profiler.Spec) []profiler.Dispatch {
	rows, d := s.Dims["rows"], s.Dims["D"]
	wg, vec, rpg, rb, st := s.Knobs["WG"], s.Knobs["VEC"], s.Knobs["RPG"], s.Knobs["RB"], s.Knobs["ST"]
	k := profiler.Dispatch{
		Name: "rmsnorm_bwd",
		Program: profiler.Program{Source: "rmsnorm_bwd", Entry: "rmsnorm_bwd", Macros: []profiler.Macro{
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "VEC", Value: strconv.Itoa(vec)},
			{Name: "RPG", Value: strconv.Itoa(rpg)},
			{Name: "RB", Value: strconv.Itoa(rb)},
			{Name: "ST", Value: strconv.Itoa(st)},
			{Name: "D", Value: strconv.Itoa(d)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}},
		Grid:    [3]int{kit.CeilDiv(rows, rpg), 1, 1},
		Group:   [3]int{wg, 1, 1},
		Args:    []string{"X", "W", "dY", "dX", "dW"},
		Scalars: []profiler.Scalar{profiler.I32Param("rows", rows), profiler.F32Param("eps", RMSNormEps)},
		TGM:     RMSNormBwdTGM(wg, rb, st, d, s.DType.Size()),
	}
	if st > 0 {
		k.Args = append(k.Args, "sync")
		k.DynamicTGM = st * 2 * d * s.DType.Size()
		return []profiler.Dispatch{k}
	}
	return []profiler.Dispatch{{Name: "zero_dW", Zero: "dW"}, k}
}

// Validate applies the vector, register, thread and index rules.
func (f RMSNormBwd) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"WG", "VEC", "RPG", "RB"}, []string{"rows", "D"}); err != nil {
		return err
	}
	d, wg, vec, rpg, rb := s.Dims["D"], s.Knobs["WG"], s.Knobs["VEC"], s.Knobs["RPG"], s.Knobs["RB"]
	if rpg%rb != 0 {
		return fmt.Errorf("RPG=%d must be a multiple of RB=%d: a group takes its rows in whole batches; lower RB or raise RPG", rpg, rb)
	}
	if err := kit.CheckVec(vec, s.DType, d, "D"); err != nil {
		return err
	}
	if st := s.Knobs["ST"]; st != 0 {
		if !dev.Has(profiler.FeatureCUDAKernels) || !dev.Has(profiler.FeatureCPAsync) {
			return fmt.Errorf("ST=%d stages rows in shared memory with cp.async, which only the CUDA kernel does: set ST=0 on %s", st, dev.Backend)
		}
		if st%rb != 0 || st < 2*rb {
			return fmt.Errorf("ST=%d row slots must be a multiple of RB=%d and at least 2·RB=%d (one batch in use while the next is in flight): raise ST or lower RB", st, rb, 2*rb)
		}
		if vec*s.DType.Size() < 4 {
			return fmt.Errorf("VEC=%d %s elements are %d bytes, less than the 4 bytes cp.async moves: with ST > 0 use VEC ≥ %d", vec, s.DType, vec*s.DType.Size(), 4/s.DType.Size())
		}
	}
	if per := kit.CeilDiv(d, wg*vec) * vec; per > maxColsPerThread {
		return fmt.Errorf("D=%d over WG=%d threads is %d columns per thread, more than the %d a thread keeps in registers (X, dY, W and dW partials): raise WG to at least %d", d, wg, per, maxColsPerThread, kit.CeilDiv(d, maxColsPerThread))
	} else if regs := per * (2*rb + 2); regs > 4*maxColsPerThread {
		return fmt.Errorf("RB=%d rows of %d columns per thread need %d registers for X, dY, W and the dW partials, more than %d: lower RB or raise WG", rb, per, regs, 4*maxColsPerThread)
	}
	if err := kit.CheckIndexRange(map[string]int64{"X/dY/dX": int64(s.Dims["rows"]) * int64(d)}); err != nil {
		return err
	}
	ds := f.dispatches(s)
	return kit.CheckGroup(&ds[len(ds)-1], dev, "lower WG", "lower ST (the ring holds ST·2·D elements)")
}

// Plan builds buffers, the zero fill and the kernel, FLOPs and bytes.
func (f RMSNormBwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	rows, d := int64(s.Dims["rows"]), int64(s.Dims["D"])
	n := rows * d
	t := s.DType
	sz := float64(t.Size())
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "X", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitNormal, Scale: 1},
			{Name: "W", Role: profiler.In, Type: t, Elems: d, Init: profiler.InitUniform, Lo: 0.5, Hi: 1.5},
			{Name: "dY", Role: profiler.In, Type: t, Elems: n, Init: profiler.InitNormal, Scale: 1},
			{Name: "dX", Role: profiler.Out, Type: t, Elems: n, Init: profiler.InitPoison},
			{Name: "dW", Role: profiler.Out, Type: profiler.F32, Elems: d, Init: profiler.InitPoison},
		},
		Dispatches: f.dispatches(s),
		FLOPs:      12 * float64(n),
		Bytes:      3*float64(n)*sz + float64(d)*sz + 4*float64(d),
		Notes:      []string{fmt.Sprintf("dW is zero-filled and then takes %d float atomic adds (rows/RPG·D); the zero fill is timed", int64(kit.CeilDiv(int(rows), s.Knobs["RPG"]))*d)},
	}
	if s.Knobs["ST"] > 0 {
		p.Buffers = append(p.Buffers, profiler.BufferSpec{Name: "sync", Role: profiler.Scratch, Type: profiler.I32, Elems: 2, Init: profiler.InitZero})
		p.Notes = []string{fmt.Sprintf("no zero fill dispatch: the launch's first group zeroes dW, and the %d groups add %d float atomics after its flag", kit.CeilDiv(int(rows), s.Knobs["RPG"]), int64(kit.CeilDiv(int(rows), s.Knobs["RPG"]))*d)}
	}
	return p, nil
}

// Reference computes dX for sampled rows and all of dW (which sums every
// row) in float64.
func (RMSNormBwd) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	rowsN, d := s.Dims["rows"], s.Dims["D"]
	if err := kit.NeedInputs(in, map[string]int{"X": rowsN * d, "W": d, "dY": rowsN * d}); err != nil {
		return nil, err
	}
	x, w, dy := in["X"], in["W"], in["dY"]
	rinv := make([]float64, rowsN)
	kit.ParallelRows(rowsN, func(r int) {
		rinv[r] = RMSNormInv(x[r*d : (r+1)*d])
	})
	rows := profiler.SampleRows(rowsN, maxRows, seed)
	idx := make([]int, len(rows)*d)
	want := make([]float64, len(rows)*d)
	gx := kit.NewGrowth(d, len(want), 0)
	kit.ParallelRows(len(rows), func(n int) {
		off := rows[n] * d
		RMSNormBwdRow(x[off:off+d], w, dy[off:off+d], rinv[rows[n]], want[n*d:(n+1)*d])
		RMSNormBwdMag(x[off:off+d], w, dy[off:off+d], rinv[rows[n]], gx.Mag[n*d:(n+1)*d])
		for c := range d {
			idx[n*d+c] = off + c
		}
	})
	// dW by column blocks, each over every row.
	dw := make([]float64, d)
	dwIdx := make([]int, d)
	gw := kit.NewGrowth(rowsN, d, 0)
	dwSq := make([]float64, d)
	const blk = 256
	kit.ParallelRows(kit.CeilDiv(d, blk), func(b int) {
		lo, hi := b*blk, min((b+1)*blk, d)
		for r := range rowsN {
			off := r * d
			for c := lo; c < hi; c++ {
				t := float64(dy[off+c]) * float64(x[off+c]) * rinv[r]
				dw[c] += t
				gw.Mag[c] += math.Abs(t)
				dwSq[c] += t * t
			}
		}
		for c := lo; c < hi; c++ {
			gw.Mag[c] = kit.SumMag(dw[c], gw.Mag[c], dwSq[c])
		}
		for c := lo; c < hi; c++ {
			dwIdx[c] = c
		}
	})
	return &profiler.Reference{
		Checks: []profiler.Check{
			{Buffer: "dX", Index: idx, Want: want, Growth: gx, Dims: []int{rowsN, d}},
			{Buffer: "dW", Index: dwIdx, Want: dw, Growth: gw},
		},
		RowsChecked: len(rows),
		RowsTotal:   rowsN,
		Rows:        profiler.DescribeRows(rows, rowsN, seed) + " of dX; all of dW",
	}, nil
}

// RMSNormInv is 1/sqrt(mean(x²)+eps) in float64.
func RMSNormInv(x []float32) float64 {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	return 1 / math.Sqrt(ss/float64(len(x))+RMSNormEps)
}

// RMSNormBwdRow is dX of one row in float64.
func RMSNormBwdRow(x, w, dy []float32, r float64, dx []float64) {
	var dot float64
	for c := range x {
		dot += float64(dy[c]) * float64(w[c]) * float64(x[c])
	}
	k := r * r * r / float64(len(x)) * dot
	for c := range x {
		dx[c] = r*float64(w[c])*float64(dy[c]) - float64(x[c])*k
	}
}

// RMSNormBwdMag sets mag[c] to the magnitude dX[c] is formed from:
// r·|W_c·dY_c| + 3·|X_c|·r³/D·R, R the kit.SumMag of the row's dot
// Σ dY·W·X (r = 1/rms is itself a reduction of D squares, and enters
// cubed), the row's D terms being the reduction.
func RMSNormBwdMag(x, w, dy []float32, r float64, mag []float64) {
	var sum, abs, sq float64
	for c := range x {
		t := float64(dy[c]) * float64(w[c]) * float64(x[c])
		sum, abs, sq = sum+t, abs+math.Abs(t), sq+t*t
	}
	k := 3 * r * r * r / float64(len(x)) * kit.SumMag(sum, abs, sq)
	for c := range x {
		mag[c] = r*math.Abs(float64(w[c])*float64(dy[c])) + math.Abs(float64(x[c]))*k
	}
}

// RMSNormBwdTolerances: dW sums every row in f32 in an order set by the
// atomics, so f32 gets a larger ATol than the default; the 16-bit types
// round dX once.
var RMSNormBwdTolerances = map[profiler.DType]profiler.Tolerance{
	profiler.F32:  {ATol: 1e-4, RTol: 1e-4},
	profiler.F16:  {ATol: 1e-3, RTol: 5e-3},
	profiler.BF16: {ATol: 8e-3, RTol: 2e-2},
}

// Tolerance is the pass criterion for dtype d.
func (RMSNormBwd) Tolerance(d profiler.DType) profiler.Tolerance {
	return kit.PickTol(RMSNormBwdTolerances, d)
}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (RMSNormBwd) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "rmsnorm_bwd", DType: profiler.BF16, Knobs: map[string]int{"WG": 64, "VEC": 2, "RPG": 4, "RB": 4}, Dims: map[string]int{"rows": 10, "D": 200}}}
}
