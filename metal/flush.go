package metal

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// FlushThreads is the cold-cache flush kernel's threads per group.
const FlushThreads = 256

// FlushNever is the flush kernel's `never`: a value the XOR of its reads
// cannot take (see shaders/l2flush/l2flush.metal), so it stores nothing.
const FlushNever = 1

// FlushProgram is the cold-cache flush kernel (shaders/l2flush/l2flush.metal).
var FlushProgram = profiler.Program{Source: "l2flush", Entry: "mltop_slc_flush",
	Macros: []profiler.Macro{{Name: "FLUSH_THREADS", Value: fmt.Sprint(FlushThreads)}}}

// FlushDispatch reads all of a flush buffer of bytes (a multiple of 16)
// with groups threadgroups of FlushThreads: enough groups to keep every
// core loading, each thread walking the buffer with a grid stride.
func FlushDispatch(bytes int64, groups int) *profiler.Dispatch {
	return &profiler.Dispatch{Name: "cache flush", Program: FlushProgram, Args: []string{"flush"},
		Grid: [3]int{max(groups, 1), 1, 1}, Group: [3]int{FlushThreads, 1, 1},
		Scalars: []profiler.Scalar{profiler.I32Param("n", int(bytes/16)), profiler.I32Param("never", FlushNever)}}
}

// FlushGroups is the flush's threadgroups on a GPU of cores cores: eight
// per core, so each core has groups waiting while others load.
func FlushGroups(cores int) int { return max(8*cores, 8) }
