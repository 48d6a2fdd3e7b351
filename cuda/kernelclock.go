package cuda

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/mltop/mltop/profiler"
)

// The kernel clock: each kernel's own start and end timestamps, taken by
// the GPU and delivered by CUPTI's activity records, instead of CUDA
// events recorded around the launch.
//
// Why: an event pair measures from the moment the stream reaches the start
// event to the moment it reaches the end event, which includes the launch
// of the kernel between them. On an H100 that adds 2.5-3.4 µs to every
// kernel whatever its length (scripts/timing-diag.sh: a 1.4 µs kernel reads
// 4.6 µs with events; a 174 µs one 177 µs), which is 5-7% of a 40-70 µs
// memory-bound kernel and most of a short one. Nsight Compute's
// gpu__time_duration sits in between (about 1.2 µs over the kernel's own
// timestamps).
//
// This file is the pure part: the record layouts and the matching of
// records to the launches a timing loop made, so that both are tested
// without a GPU. cupti_linux.go loads CUPTI and collects the records.

// Activity kinds (CUpti_ActivityKind, cupti_activity.h).
const (
	activityMemset           = 2
	activityKernel           = 3
	activityConcurrentKernel = 10
)

// activity is what mltop keeps of one CUPTI record.
type activity struct {
	Kind       uint32
	Start, End uint64 // ns, GPU timestamps
	Device     uint32
	Grid       [3]int32 // kernels only
	Block      [3]int32
}

// Byte offsets in the kernel record. CUpti_ActivityKernel4 to the newest
// version share this prefix (a packed struct, 8-byte aligned): kind,
// cacheConfig, sharedMemoryConfig, registersPerThread, the two
// partitioned-cache configs, then start, end, completed, deviceId,
// contextId, streamId, gridX..Z, blockX..Z.
const (
	kernelRecStart  = 16
	kernelRecEnd    = 24
	kernelRecDevice = 40
	kernelRecGrid   = 52
	kernelRecBlock  = 64
	kernelRecMin    = 76
	// CUpti_ActivityMemset (all versions): kind, value, bytes, start, end,
	// deviceId, contextId, streamId, correlationId…
	memsetRecStart  = 16
	memsetRecEnd    = 24
	memsetRecDevice = 32
	memsetRecMin    = 36
)

// parseActivity reads a record (at least its known prefix). ok is false
// for kinds mltop does not use and for records too short to hold the
// fields.
func parseActivity(rec []byte) (activity, bool) {
	if len(rec) < 4 {
		return activity{}, false
	}
	le := binary.LittleEndian
	a := activity{Kind: le.Uint32(rec)}
	switch a.Kind {
	case activityKernel, activityConcurrentKernel:
		if len(rec) < kernelRecMin {
			return activity{}, false
		}
		a.Start, a.End = le.Uint64(rec[kernelRecStart:]), le.Uint64(rec[kernelRecEnd:])
		a.Device = le.Uint32(rec[kernelRecDevice:])
		for i := range 3 {
			a.Grid[i] = int32(le.Uint32(rec[kernelRecGrid+4*i:]))
			a.Block[i] = int32(le.Uint32(rec[kernelRecBlock+4*i:]))
		}
	case activityMemset:
		if len(rec) < memsetRecMin {
			return activity{}, false
		}
		a.Start, a.End = le.Uint64(rec[memsetRecStart:]), le.Uint64(rec[memsetRecEnd:])
		a.Device = le.Uint32(rec[memsetRecDevice:])
	default:
		return activity{}, false
	}
	return a, true
}

func (a activity) isKernel() bool {
	return a.Kind == activityKernel || a.Kind == activityConcurrentKernel
}

// expected is one piece of GPU work a timing loop enqueued, in stream
// order: a kernel of a grid and block shape, or a memset. Slot is where
// its duration goes (rep×dispatches + dispatch), or -1 for work that is
// not timed (the cache flush between samples).
type expected struct {
	Memset      bool
	Grid, Block [3]int32
	Slot        int
}

func (e expected) String() string {
	if e.Memset {
		return "memset"
	}
	return fmt.Sprintf("kernel grid %v block %v", e.Grid, e.Block)
}

// matchActivities gives each timed slot the duration (ns) of its record.
// The records are those of one device since the loop began; they must be
// exactly the expected work in order (sorted by start time, as one stream
// runs them): a kernel record whose grid and block are the launch's, a
// memset record for a memset. Anything else, a missing or extra record or
// a timestamp that runs backwards, is an error and the caller keeps its
// event timings: the kernel clock is used only when every record is
// accounted for.
func matchActivities(want []expected, got []activity, slots int) ([]float64, error) {
	if len(got) != len(want) {
		return nil, fmt.Errorf("%d activity records for %d launches", len(got), len(want))
	}
	recs := slices.Clone(got)
	slices.SortStableFunc(recs, func(a, b activity) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	out := make([]float64, slots)
	filled := make([]bool, slots)
	for i, w := range want {
		r := recs[i]
		if w.Memset != (r.Kind == activityMemset) || (!w.Memset && !r.isKernel()) {
			return nil, fmt.Errorf("record %d is kind %d where the loop enqueued a %s", i, r.Kind, w)
		}
		if !w.Memset && (r.Grid != w.Grid || r.Block != w.Block) {
			return nil, fmt.Errorf("record %d is a kernel of grid %v block %v where the loop enqueued a %s", i, r.Grid, r.Block, w)
		}
		if r.End < r.Start {
			return nil, fmt.Errorf("record %d ends before it starts (%d..%d)", i, r.Start, r.End)
		}
		if w.Slot < 0 {
			continue
		}
		if w.Slot >= slots || filled[w.Slot] {
			return nil, fmt.Errorf("slot %d out of range or taken twice", w.Slot)
		}
		out[w.Slot] = float64(r.End - r.Start)
		filled[w.Slot] = true
	}
	for i, f := range filled {
		if !f {
			return nil, fmt.Errorf("slot %d has no record", i)
		}
	}
	return out, nil
}

// clockFromProbes turns the SM clock probes' counts (cycles, nanoseconds
// per slot) into MHz: the mean over slots that counted something plausible
// (100 MHz to 10 GHz), or 0 when none did.
func clockFromProbes(raw []uint64) float64 {
	var sum float64
	n := 0
	for i := 0; i+1 < len(raw); i += 2 {
		cycles, ns := raw[i], raw[i+1]
		if ns == 0 {
			continue
		}
		mhz := 1e3 * float64(cycles) / float64(ns)
		if mhz < 100 || mhz > 10000 {
			continue
		}
		sum += mhz
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// stepKind is one thing a timing loop enqueues on the stream.
type stepKind int

const (
	stepProbe  stepKind = iota // the SM clock probe; Index is its slot
	stepFlush                  // the cold flush kernel
	stepDirty                  // the dirty flush (a memset)
	stepRecord                 // an event record; Index is the event
	stepLaunch                 // dispatch Index of the plan; Slot is rep×n + Index
)

// step is one entry of a timing loop's stream order.
type step struct {
	Kind  stepKind
	Index int
	Slot  int
}

// timingLoop lays out a timing loop of reps repetitions of n dispatches in
// stream order, and for each timed slot (rep×n + dispatch) the events that
// bound it. Hot: one event before each rep and one after each dispatch,
// back to back (a slot spans from the previous dispatch's end). Cold and
// dirty, when the backend has a flush buffer: before EACH dispatch the
// flush, then the dispatch's own start event, the dispatch, its end event,
// so that no flush is ever inside a timed span. The SM clock probes, when
// probing, come first and last, outside every span.
func timingLoop(n, reps int, mode profiler.CacheMode, canFlush, probing bool) (steps []step, spans [][2]int, events int) {
	prepare := canFlush && (mode == profiler.CacheCold || mode == profiler.CacheDirty)
	per := n + 1
	if prepare {
		per = 2 * n
	}
	if probing {
		steps = append(steps, step{Kind: stepProbe, Index: 0})
	}
	spans = make([][2]int, reps*n)
	for r := range reps {
		base := r * per
		if !prepare {
			steps = append(steps, step{Kind: stepRecord, Index: base})
		}
		for i := range n {
			start, end := base+i, base+i+1
			if prepare {
				start, end = base+2*i, base+2*i+1
				flush := stepFlush
				if mode == profiler.CacheDirty {
					flush = stepDirty
				}
				steps = append(steps, step{Kind: flush}, step{Kind: stepRecord, Index: start})
			}
			steps = append(steps, step{Kind: stepLaunch, Index: i, Slot: r*n + i}, step{Kind: stepRecord, Index: end})
			spans[r*n+i] = [2]int{start, end}
		}
	}
	if probing {
		steps = append(steps, step{Kind: stepProbe, Index: 1})
	}
	return steps, spans, reps * per
}

// expectedOf is the record a dispatch leaves: a memset for a zero fill, a
// kernel of its grid and block otherwise.
func expectedOf(d *profiler.Dispatch, slot int) expected {
	if d.Zero != "" {
		return expected{Memset: true, Slot: slot}
	}
	g, t := d.Grid, d.Group
	return expected{Grid: [3]int32{int32(g[0]), int32(g[1]), int32(g[2])}, Block: [3]int32{int32(t[0]), int32(t[1]), int32(t[2])}, Slot: slot}
}
