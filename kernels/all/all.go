// Package all is the one list of kernel families: importing it registers
// every built-in family (and its CPU implementation) with the profiler.
// main and the tests that need the families import it; a new family adds
// one line here.
package all

import (
	_ "github.com/mltop/mltop/kernels/attn_bwd"
	_ "github.com/mltop/mltop/kernels/attn_bwd_atomic"
	_ "github.com/mltop/mltop/kernels/attn_bwd_unfused"
	_ "github.com/mltop/mltop/kernels/attn_fwd"
	_ "github.com/mltop/mltop/kernels/cross_entropy"
	_ "github.com/mltop/mltop/kernels/embedding_bwd"
	_ "github.com/mltop/mltop/kernels/gated_delta_chunk"
	_ "github.com/mltop/mltop/kernels/rmsnorm_bwd"
	_ "github.com/mltop/mltop/kernels/sdpa_multi"
	_ "github.com/mltop/mltop/kernels/softmax_bwd"
	_ "github.com/mltop/mltop/kernels/transpose"
)
