package embeddingbwd

import (
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
)

func init() { host.RegisterKernel("embedding_bwd", CPUEmbeddingBwd) }

// CPUEmbeddingBwd is the CPU embedding backward (see the embedding_bwd plan
// contract in kernels/embedding_bwd/embedding_bwd.go): group x scatters the dY rows of
// tokens [x·TPG, …) into dW[ids[t]] with atomic adds.
func CPUEmbeddingBwd(g *host.Group) {
	tpg := g.Macro("TPG")
	dt := g.DType()
	tokens, d := g.Int("tokens"), g.Int("D")
	ids, dY, dW := g.Arg(0, profiler.I32), g.Arg(1, dt), g.Arg(2, profiler.F32)
	row := g.Scratch(d)
	for t := g.ID[0] * tpg; t < min((g.ID[0]+1)*tpg, tokens); t++ {
		id := int(ids.At(t))
		dY.Load(t*d, row)
		for c, v := range row {
			dW.AtomicAdd(id*d+c, v)
		}
	}
}
