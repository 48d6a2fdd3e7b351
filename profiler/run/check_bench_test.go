package run

import (
	"math"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// checkCase is one output check of the sizes a GPU sweep verifies twice
// per spec: the output buffers of a plan, filled with values in their
// dtype, and a reference of MaxRows sampled rows that those values pass.
type checkCase struct {
	name string
	bufs []profiler.BufferSpec
	// rowLen is the elements of one checked row of each buffer (0: the
	// whole buffer is checked, as rmsnorm_bwd's dW).
	rowLen []int
	tol    profiler.Tolerance
}

// checkCases are the outputs of the H100 sweeps the check's cost was
// measured on: attn_fwd's O (bf16) and L (f32) at B=1 H=32 L=2048 D=128 and
// B=1 H=16 L=4096 D=128, softmax_bwd's dX (f32, 4096 of the sweep's
// 4096–16384 rows × 4096 cols) and rmsnorm_bwd's dX (bf16, 8192 of its
// 8192–32768 rows × 4096) and dW (f32). The row counts taken are the
// sweep's smallest: the checked elements (256 rows) and their ranges (one
// per row) are those of the largest.
func checkCases() []checkCase {
	attn := func(name string, h, l int) checkCase {
		rows := h * l
		return checkCase{name: name,
			bufs: []profiler.BufferSpec{
				{Name: "O", Role: profiler.Out, Type: profiler.BF16, Elems: int64(rows * 128)},
				{Name: "L", Role: profiler.Out, Type: profiler.F32, Elems: int64(rows)},
			},
			rowLen: []int{128, 1}, tol: profiler.Tolerance{ATol: 1.6e-2, RTol: 2e-2}}
	}
	return []checkCase{
		attn("attn_fwd/H32_L2048_D128", 32, 2048),
		attn("attn_fwd/H16_L4096_D128", 16, 4096),
		{name: "softmax_bwd/4096x4096_f32",
			bufs:   []profiler.BufferSpec{{Name: "dX", Role: profiler.Out, Type: profiler.F32, Elems: 4096 * 4096}},
			rowLen: []int{4096}, tol: profiler.Tolerance{ATol: 1e-5, RTol: 1e-5}},
		{name: "rmsnorm_bwd/8192x4096_bf16",
			bufs: []profiler.BufferSpec{
				{Name: "dX", Role: profiler.Out, Type: profiler.BF16, Elems: 8192 * 4096},
				{Name: "dW", Role: profiler.Out, Type: profiler.F32, Elems: 4096},
			},
			rowLen: []int{4096, 0}, tol: profiler.Tolerance{ATol: 1e-2, RTol: 1.6e-2}},
	}
}

// hostBuffer is device memory as a fake backend holds it: host bytes.
type hostBuffer []byte

func (b hostBuffer) Size() int64 { return int64(len(b)) }

// hostBackend is a backend of host memory that downloads whole buffers and
// ranges (profiler.RangeDownloader) as memory copies, so a benchmark of the
// check measures the host's work only. Its other methods are not called.
type hostBackend struct{ profiler.Backend }

func (hostBackend) Download(buf profiler.Buffer, dst []byte) error {
	copy(dst, buf.(hostBuffer))
	return nil
}

func (hostBackend) DownloadRanges(buf profiler.Buffer, offsets []int64, dsts [][]byte) error {
	if err := profiler.CheckRanges(buf.Size(), offsets, dsts); err != nil {
		return err
	}
	for i, off := range offsets {
		copy(dsts[i], buf.(hostBuffer)[off:])
	}
	return nil
}

// setup allocates the case's buffers on b, fills them with values rounded
// to their dtype, and makes a passing reference over 256 sampled rows
// (with a growth term per element, as the families' references have).
func (c checkCase) setup(tb testing.TB) (*profiler.Reference, *profiler.Plan, map[string]profiler.Buffer) {
	tb.Helper()
	plan := &profiler.Plan{Buffers: c.bufs}
	bufs := map[string]profiler.Buffer{}
	ref := &profiler.Reference{}
	for i, bs := range c.bufs {
		tol := c.tol
		vals := make([]float32, bs.Elems)
		rng := profiler.NewRNG(uint64(i + 1))
		for k := range vals {
			vals[k] = bs.Type.Round(float32(2*rng.Float64() - 1))
		}
		raw := make([]byte, bs.Bytes())
		bs.Type.Encode(raw, vals)
		bufs[bs.Name] = hostBuffer(raw)
		var idx []int
		if rl := c.rowLen[i]; rl > 0 {
			for _, r := range profiler.SampleRows(int(bs.Elems)/rl, 256, 1) {
				for d := range rl {
					idx = append(idx, r*rl+d)
				}
			}
		} else {
			for k := range int(bs.Elems) {
				idx = append(idx, k)
			}
		}
		want := make([]float64, len(idx))
		gr := &profiler.Growth{Eps: math.Pow(2, -24), N: 4096, Mag: make([]float64, len(idx))}
		for k, e := range idx {
			// off by a tenth of the absolute tolerance: a pass
			want[k] = float64(vals[e]) + 0.1*tol.ATol*(2*rng.Float64()-1)
			gr.Mag[k] = math.Abs(want[k]) * 10
		}
		ref.Checks = append(ref.Checks, profiler.Check{Buffer: bs.Name, Index: idx, Want: want, Growth: gr})
	}
	ref.RowsChecked, ref.RowsTotal = 256, 256
	return ref, plan, bufs
}

// BenchmarkCheck is the two checks of a spec's outputs as the runner
// makes them, from host memory (the host's share of each check):
//   - before: the check before timing, of a spec whose shape was checked
//     before (download, decode, compare);
//   - after: the check after timing of outputs that did not change
//     (download, bytes compared with the first download);
//   - after_changed: the same, of outputs that changed (decoded and
//     compared again);
//   - layout: the first check of a shape, which lays out its reference.
func BenchmarkCheck(b *testing.B) {
	for _, c := range checkCases() {
		b.Run(c.name, func(b *testing.B) { benchmarkCheck(b, c) })
	}
}

func benchmarkCheck(b *testing.B, c checkCase) {
	ref, plan, bufs := c.setup(b)
	b.Run("before", func(b *testing.B) {
		r := &Runner{backend: hostBackend{}}
		for b.Loop() {
			chk, err := r.startCheck(ref, plan, bufs, c.tol)
			if err != nil {
				b.Fatal(err)
			}
			if v := chk.compareFirst()(); !v.Pass {
				b.Fatalf("the benchmark's outputs fail their check: %s", v.Worst)
			}
			chk.release()
		}
	})
	for _, changed := range []bool{false, true} {
		name := "after"
		if changed {
			name += "_changed"
		}
		b.Run(name, func(b *testing.B) {
			r := &Runner{backend: hostBackend{}}
			chk, err := r.startCheck(ref, plan, bufs, c.tol)
			if err != nil {
				b.Fatal(err)
			}
			chk.compareFirst()()
			defer chk.release()
			if changed {
				out := bufs[c.bufs[0].Name].(hostBuffer)
				at := ref.Checks[0].Index[0] * c.bufs[0].Type.Size()
				out[at] ^= 1 // the lowest bit of the first checked element
				defer func() { out[at] ^= 1 }()
			}
			for b.Loop() {
				if _, err := chk.again(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			if _, err := newCheckLayout(ref, plan, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
