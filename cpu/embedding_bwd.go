package cpu

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/mltop/mltop/profiler"
)

func init() { RegisterKernel("embedding_bwd", EmbeddingBwd) }

// trainAtomicAdd adds v to the f32 element i of t with a compare-and-swap
// loop: the CPU's stand-in for a GPU float atomic, for outputs that
// several groups update at once.
func trainAtomicAdd(t Tensor, i int, v float32) {
	p := (*uint32)(unsafe.Pointer(&t.b[4*i]))
	for {
		old := atomic.LoadUint32(p)
		if atomic.CompareAndSwapUint32(p, old, math.Float32bits(math.Float32frombits(old)+v)) {
			return
		}
	}
}

// EmbeddingBwd is the CPU embedding backward (see the embedding_bwd plan
// contract in kernels/embedding_bwd.go): group x scatters the dY rows of
// tokens [x·TPG, …) into dW[ids[t]] with atomic adds.
func EmbeddingBwd(g *Group) {
	tpg := g.Macro("TPG")
	dt := g.DType()
	tokens, d := g.Int("tokens"), g.Int("D")
	ids, dY, dW := g.Arg(0, profiler.I32), g.Arg(1, dt), g.Arg(2, profiler.F32)
	row := g.Scratch(d)
	for t := g.ID[0] * tpg; t < min((g.ID[0]+1)*tpg, tokens); t++ {
		id := int(ids.At(t))
		dY.Load(t*d, row)
		for c, v := range row {
			trainAtomicAdd(dW, id*d+c, v)
		}
	}
}
