package embeddingbwd

// embedding_bwd: the backward pass of an embedding lookup, a scatter-add
//   dW[ids[t], :] += dY[t, :]   for every token t
// into an f32 gradient table with float atomics (tokens that share an id
// collide), after a zero fill of the table.
//
// Plan contract (Plan, CPU Go kernel, CUDA and Metal kernels agree):
//   source "embedding_bwd", entry "embedding_bwd".
//   dims: tokens (1..1<<24, default 8192), vocab (1..1<<20, default 32000),
//     D (1..16384, default 4096).
//   knobs: WG ∈ {32,…,1024} threads per group (default 256); VEC ∈ {1,2,4,8}
//     elements per thread per step (default 4; VEC·sizeof(T) ≤ 16, D % VEC == 0).
//     TPG ∈ {1,2,4,8,16,32} tokens per group (default 1; with GATHER=1 table rows
//     per group). GATHER ∈ {0,1} (default 0; 1 is CUDA only): 0 zero-fills
//     dW and scatters with atomics, 1 links the tokens of each id into a
//     list first and writes each table row once (below).
//   buffers: ids [tokens] i32 in (ints in [0, vocab)), dY [tokens, D] T in
//     (normal), dW [vocab, D] f32 out.
//   dispatches (both timed): "zero_dW" zero-fills dW; "embedding_bwd" grid
//     (ceil(tokens/TPG),1,1), group (WG,1,1); Args ids, dY, dW; Scalars
//     (i32 tokens, i32 D); Macros WG, VEC, TPG, DTYPE. Group g handles tokens
//     [g·TPG, …); thread i adds the VEC-wide column vectors i, i+WG, … of
//     each token's dY row into its dW row.
//   TGM items: none.
//   GATHER=1 instead: scratch buffers head [vocab] i32 (zero; left zeroed
//     by each launch) and nxt [tokens] i32 (poison); dispatches (both timed)
//     "embedding_link" grid (ceil(tokens/256),1,1), group (256,1,1); Args
//     ids, head, nxt; Scalars (i32 tokens): nxt[t] = atomicExch(head[id], t+1),
//     so head[id]−1 is the last token of id and nxt[t]−1 the one before it
//     (−1: none); then "embedding_gather" grid (ceil(vocab/TPG),1,1), group
//     (WG,1,1); Args head, nxt, dY, dW; Scalars (i32 vocab, i32 D): group g
//     writes table rows [g·TPG, …), each the f32 sum of the dY rows on its
//     list (zeros for an empty one) with plain stores, and zeroes their
//     heads: no zero fill of dW and no float atomics. A list is walked one
//     dependent load per token.
//   FLOPs 1 per element of dY; bytes tokens·D·sz + 4·tokens + 4·vocab·D
//     (read dY and ids once, write the whole table once: the minimum; the
//     scatter moves more, its zero fill plus the atomics' read-modify-write
//     of touched rows; the gather moves the lists' few bytes beside it).

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

func init() { profiler.Register(EmbeddingBwd{}) }

var _ profiler.Family = EmbeddingBwd{}

// EmbeddingBwd is the embedding backward (scatter-add) family.
type EmbeddingBwd struct{}

// Name is the family name.
func (EmbeddingBwd) Name() string { return "embedding_bwd" }

// Doc is the one-line description.
func (EmbeddingBwd) Doc() string {
	return "embedding backward: zero fill dW, then scatter-add dY rows into dW[ids] with float atomics (memory-bound)"
}

// Schema lists knobs, dims and dtypes.
func (EmbeddingBwd) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs: []profiler.Param{
			{Name: "WG", Doc: "threads per group", Default: 256, Values: kit.WGValues},
			{Name: "VEC", Doc: "elements per thread per step (VEC·sizeof(T) ≤ 16 bytes)", Default: 4, Values: []int{1, 2, 4, 8}},
			{Name: "TPG", Doc: "tokens per group (GATHER=1: table rows per group)", Default: 1, Values: []int{1, 2, 4, 8, 16, 32}},
			{Name: "GATHER", Doc: "1: link each id's tokens, then write each table row once (no zero fill, no float atomics; CUDA only); 0: zero fill + atomic scatter", Default: 0, Values: []int{0, 1}},
		},
		Dims: []profiler.Param{
			{Name: "tokens", Doc: "tokens (rows of dY)", Default: 8192, Min: 1, Max: 1 << 24},
			{Name: "vocab", Doc: "rows of the embedding table", Default: 32000, Min: 1, Max: 1 << 20},
			{Name: "D", Doc: "embedding width", Default: 4096, Min: 1, Max: 16384},
		},
		DTypes: []profiler.DType{profiler.F32, profiler.F16, profiler.BF16},
	}
}

// EmbeddingLinkWG is the group size of the GATHER=1 list-linking kernel.
const EmbeddingLinkWG = 256

func (EmbeddingBwd) dispatches(s profiler.Spec) []profiler.Dispatch {
	tokens, vocab, d := s.Dims["tokens"], s.Dims["vocab"], s.Dims["D"]
	wg, vec, tpg := s.Knobs["WG"], s.Knobs["VEC"], s.Knobs["TPG"]
	if s.Knobs["GATHER"] == 1 {
		macros := []profiler.Macro{
			{Name: "WG", Value: strconv.Itoa(wg)},
			{Name: "VEC", Value: strconv.Itoa(vec)},
			{Name: "TPG", Value: strconv.Itoa(tpg)},
			{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
		}
		return []profiler.Dispatch{
			{
				Name:    "embedding_link",
				Program: profiler.Program{Source: "embedding_bwd", Entry: "embedding_link", Macros: macros},
				Grid:    [3]int{kit.CeilDiv(tokens, EmbeddingLinkWG), 1, 1},
				Group:   [3]int{EmbeddingLinkWG, 1, 1},
				Args:    []string{"ids", "head", "nxt"},
				Scalars: []profiler.Scalar{profiler.I32Param("tokens", tokens)},
			},
			{
				Name:    "embedding_gather",
				Program: profiler.Program{Source: "embedding_bwd", Entry: "embedding_gather", Macros: macros},
				Grid:    [3]int{kit.CeilDiv(vocab, tpg), 1, 1},
				Group:   [3]int{wg, 1, 1},
				Args:    []string{"head", "nxt", "dY", "dW"},
				Scalars: []profiler.Scalar{profiler.I32Param("vocab", vocab), profiler.I32Param("D", d)},
			},
		}
	}
	return []profiler.Dispatch{
		{Name: "zero_dW", Zero: "dW"},
		{
			Name: "embedding_bwd",
			Program: profiler.Program{Source: "embedding_bwd", Entry: "embedding_bwd", Macros: []profiler.Macro{
				{Name: "WG", Value: strconv.Itoa(wg)},
				{Name: "VEC", Value: strconv.Itoa(vec)},
				{Name: "TPG", Value: strconv.Itoa(tpg)},
				{Name: "DTYPE", Value: kit.DTypeMacro(s.DType)},
			}},
			Grid:    [3]int{kit.CeilDiv(tokens, tpg), 1, 1},
			Group:   [3]int{wg, 1, 1},
			Args:    []string{"ids", "dY", "dW"},
			Scalars: []profiler.Scalar{profiler.I32Param("tokens", tokens), profiler.I32Param("D", d)},
		},
	}
}

// Validate applies the vector, thread and index rules.
func (f EmbeddingBwd) Validate(s profiler.Spec, dev profiler.DeviceInfo) error {
	if err := kit.CheckPositive(s, []string{"WG", "VEC", "TPG"}, []string{"tokens", "vocab", "D"}); err != nil {
		return err
	}
	if err := kit.CheckVec(s.Knobs["VEC"], s.DType, s.Dims["D"], "D"); err != nil {
		return err
	}
	if g := s.Knobs["GATHER"]; g != 0 && !dev.Has(profiler.FeatureCUDAKernels) {
		return fmt.Errorf("GATHER=%d (sort the tokens by id, then write each table row once) has only a CUDA kernel: set GATHER=0 on %s", g, dev.Backend)
	}
	d := int64(s.Dims["D"])
	if err := kit.CheckIndexRange(map[string]int64{"dY": int64(s.Dims["tokens"]) * d, "dW": int64(s.Dims["vocab"]) * d}); err != nil {
		return err
	}
	ds := f.dispatches(s)
	if s.Knobs["GATHER"] == 1 {
		if err := kit.CheckGroup(&ds[0], dev, fmt.Sprintf("linking the tokens needs %d threads per group: use GATHER=0", EmbeddingLinkWG), ""); err != nil {
			return err
		}
	}
	return kit.CheckGroup(&ds[1], dev, "lower WG", "")
}

// Plan builds buffers, the zero fill and the scatter, FLOPs and bytes.
func (f EmbeddingBwd) Plan(s profiler.Spec, dev profiler.DeviceInfo) (*profiler.Plan, error) {
	tokens, vocab, d := int64(s.Dims["tokens"]), int64(s.Dims["vocab"]), int64(s.Dims["D"])
	t := s.DType
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "ids", Role: profiler.In, Type: profiler.I32, Elems: tokens, Init: profiler.InitInts, Lo: 0, Hi: float64(vocab)},
			{Name: "dY", Role: profiler.In, Type: t, Elems: tokens * d, Init: profiler.InitNormal, Scale: 1},
			{Name: "dW", Role: profiler.Out, Type: profiler.F32, Elems: vocab * d, Init: profiler.InitPoison},
		},
		Dispatches: f.dispatches(s),
		FLOPs:      float64(tokens * d),
		Bytes:      float64(tokens*d)*float64(t.Size()) + 4*float64(tokens) + 4*float64(vocab*d),
		Notes:      []string{fmt.Sprintf("dW (%s f32) is zero-filled in the timed plan: with few tokens per table row the fill dominates", units.Bytes(4*vocab*d))},
	}
	if s.Knobs["GATHER"] == 1 {
		p.Buffers = append(p.Buffers,
			profiler.BufferSpec{Name: "head", Role: profiler.Scratch, Type: profiler.I32, Elems: vocab, Init: profiler.InitZero},
			profiler.BufferSpec{Name: "nxt", Role: profiler.Scratch, Type: profiler.I32, Elems: tokens, Init: profiler.InitPoison})
		p.Notes = []string{fmt.Sprintf("each id's tokens are linked into a list (timed), then each of the %d table rows (%s f32 in all) is written once from its list: no zero fill, no float atomics", vocab, units.Bytes(4*vocab*d))}
	}
	return p, nil
}

// Reference sums the dY rows of each sampled table row in float64.
func (EmbeddingBwd) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	tokens, vocab, d := s.Dims["tokens"], s.Dims["vocab"], s.Dims["D"]
	if err := kit.NeedInputs(in, map[string]int{"ids": tokens, "dY": tokens * d}); err != nil {
		return nil, err
	}
	ids, dy := in["ids"], in["dY"]
	rows := profiler.SampleRows(vocab, maxRows, seed)
	pos := make(map[int]int, len(rows))
	for n, r := range rows {
		pos[r] = n
	}
	hits := make([][]int, len(rows))
	for t, id := range ids {
		if n, ok := pos[int(id)]; ok {
			hits[n] = append(hits[n], t)
		}
	}
	idx := make([]int, len(rows)*d)
	want := make([]float64, len(rows)*d)
	// The reduction length is the most tokens any checked row sums.
	most := 0
	for _, h := range hits {
		most = max(most, len(h))
	}
	gr := kit.NewGrowth(most, len(want), 0)
	kit.ParallelRows(len(rows), func(n int) {
		out, mag := want[n*d:(n+1)*d], gr.Mag[n*d:(n+1)*d]
		sq := make([]float64, d)
		for _, t := range hits[n] {
			for c := range d {
				x := float64(dy[t*d+c])
				out[c] += x
				mag[c] += math.Abs(x)
				sq[c] += x * x
			}
		}
		for c := range d {
			mag[c] = kit.SumMag(out[c], mag[c], sq[c])
		}
		for c := range d {
			idx[n*d+c] = rows[n]*d + c
		}
	})
	return &profiler.Reference{
		Checks:      []profiler.Check{{Buffer: "dW", Index: idx, Want: want, Growth: gr, Dims: []int{vocab, d}}},
		RowsChecked: len(rows),
		RowsTotal:   vocab,
		Rows:        profiler.DescribeRows(rows, vocab, seed) + " of dW",
	}, nil
}

// Tolerance: dW is f32 summed from exact inputs, whatever T is; only the
// order of the atomic adds differs.
func (EmbeddingBwd) Tolerance(profiler.DType) profiler.Tolerance {
	return profiler.Tolerance{ATol: 1e-4, RTol: 1e-4}
}

// Examples are small specs that together run every program of the family
// (see kit.Exampler): the Metal emulator and the source checks use them.
func (EmbeddingBwd) Examples() []profiler.Spec {
	return []profiler.Spec{{Kernel: "embedding_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 32, "VEC": 4, "TPG": 2}, Dims: map[string]int{"tokens": 9, "vocab": 3, "D": 40}}}
}
