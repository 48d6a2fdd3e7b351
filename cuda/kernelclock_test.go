package cuda

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// kernelRecord lays out a CUpti_ActivityKernel-style record.
func kernelRecord(start, end uint64, dev uint32, grid, block [3]int32) []byte {
	b := make([]byte, 160)
	le := binary.LittleEndian
	le.PutUint32(b, activityConcurrentKernel)
	le.PutUint64(b[kernelRecStart:], start)
	le.PutUint64(b[kernelRecEnd:], end)
	le.PutUint32(b[kernelRecDevice:], dev)
	for i := range 3 {
		le.PutUint32(b[kernelRecGrid+4*i:], uint32(grid[i]))
		le.PutUint32(b[kernelRecBlock+4*i:], uint32(block[i]))
	}
	return b
}

func memsetRecord(start, end uint64, dev uint32) []byte {
	b := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint32(b, activityMemset)
	le.PutUint32(b[4:], 0)     // value
	le.PutUint64(b[8:], 1<<20) // bytes
	le.PutUint64(b[memsetRecStart:], start)
	le.PutUint64(b[memsetRecEnd:], end)
	le.PutUint32(b[memsetRecDevice:], dev)
	return b
}

func TestParseActivity(t *testing.T) {
	k, ok := parseActivity(kernelRecord(1000, 1500, 3, [3]int32{528, 1, 1}, [3]int32{256, 1, 1}))
	if !ok || !k.isKernel() || k.Start != 1000 || k.End != 1500 || k.Device != 3 || k.Grid != [3]int32{528, 1, 1} || k.Block != [3]int32{256, 1, 1} {
		t.Errorf("kernel record read as %+v ok=%v", k, ok)
	}
	m, ok := parseActivity(memsetRecord(7, 9, 1))
	if !ok || m.Kind != activityMemset || m.Start != 7 || m.End != 9 || m.Device != 1 {
		t.Errorf("memset record read as %+v ok=%v", m, ok)
	}
	other := kernelRecord(1, 2, 0, [3]int32{}, [3]int32{})
	binary.LittleEndian.PutUint32(other, 5) // CUPTI_ACTIVITY_KIND_RUNTIME
	for name, rec := range map[string][]byte{"other kind": other, "short kernel": kernelRecord(1, 2, 0, [3]int32{}, [3]int32{})[:40], "short memset": memsetRecord(1, 2, 0)[:20], "empty": nil} {
		if a, ok := parseActivity(rec); ok {
			t.Errorf("%s: parsed as %+v, want refused", name, a)
		}
	}
}

func FuzzParseActivity(f *testing.F) {
	f.Add(kernelRecord(1, 2, 0, [3]int32{1, 1, 1}, [3]int32{32, 1, 1}))
	f.Add(memsetRecord(1, 2, 0))
	f.Fuzz(func(t *testing.T, rec []byte) {
		parseActivity(rec) // must not panic on any bytes
	})
}

func TestMatchActivities(t *testing.T) {
	flushG, flushB := [3]int32{528, 1, 1}, [3]int32{256, 1, 1}
	kG, kB := [3]int32{64, 4, 1}, [3]int32{128, 1, 1}
	flush := expected{Grid: flushG, Block: flushB, Slot: -1}
	// Two reps of [zero fill, kernel], each dispatch after a flush.
	want := []expected{flush, {Memset: true, Slot: 0}, flush, {Grid: kG, Block: kB, Slot: 1},
		flush, {Memset: true, Slot: 2}, flush, {Grid: kG, Block: kB, Slot: 3}}
	mk := func(start uint64, w expected, d uint64) activity {
		if w.Memset {
			return activity{Kind: activityMemset, Start: start, End: start + d}
		}
		return activity{Kind: activityConcurrentKernel, Start: start, End: start + d, Grid: w.Grid, Block: w.Block}
	}
	good := func() []activity {
		var rs []activity
		for i, w := range want {
			rs = append(rs, mk(uint64(1000*i), w, uint64(100+i)))
		}
		return rs
	}
	got, err := matchActivities(want, good(), 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{101, 103, 105, 107} {
		if got[i] != w {
			t.Errorf("slot %d = %g, want %g (all %v)", i, got[i], w, got)
		}
	}
	// Records delivered out of order are put back in stream order.
	rev := good()
	rev[0], rev[7] = rev[7], rev[0]
	if got, err := matchActivities(want, rev, 4); err != nil || got[3] != 107 {
		t.Errorf("out-of-order delivery: %v, %v", got, err)
	}

	broken := map[string]func([]activity) []activity{
		"missing record": func(rs []activity) []activity { return rs[:7] },
		"extra record":   func(rs []activity) []activity { return append(rs, mk(99999, flush, 5)) },
		"wrong grid":     func(rs []activity) []activity { rs[3].Grid = [3]int32{65, 4, 1}; return rs },
		"wrong block":    func(rs []activity) []activity { rs[3].Block = [3]int32{256, 1, 1}; return rs },
		"kernel for memset": func(rs []activity) []activity {
			rs[1] = mk(rs[1].Start, flush, 5)
			return rs
		},
		"memset for kernel": func(rs []activity) []activity { rs[3].Kind = activityMemset; return rs },
		"end before start":  func(rs []activity) []activity { rs[3].End = rs[3].Start - 1; return rs },
	}
	for name, breakIt := range broken {
		if got, err := matchActivities(want, breakIt(good()), 4); err == nil {
			t.Errorf("%s: matched as %v, want an error", name, got)
		}
	}
	// A slot the loop never filled is an error, not a zero duration.
	if _, err := matchActivities(want[:2], good()[:2], 2); err == nil || !strings.Contains(err.Error(), "slot 1") {
		t.Errorf("unfilled slot: %v", err)
	}
}

func TestClockFromProbes(t *testing.T) {
	cases := []struct {
		name string
		raw  []uint64
		want float64
	}{
		{"two probes", []uint64{39600, 20000, 40000, 20000}, 1990},
		{"one slot never ran", []uint64{39600, 20000, 0, 0}, 1980},
		{"implausible slot ignored", []uint64{39600, 20000, 5, 20000}, 1980},
		{"nothing", []uint64{0, 0, 0, 0}, 0},
		{"odd length", []uint64{39600}, 0},
	}
	for _, c := range cases {
		if got := clockFromProbes(c.raw); got != c.want {
			t.Errorf("%s: %g MHz, want %g", c.name, got, c.want)
		}
	}
}

// TestTimingLoopLayout checks the invariants the timer's honesty rests on,
// for every cache mode: each timed span holds exactly its own dispatch and
// nothing else (no flush, no probe, no other dispatch), every dispatch of
// every rep is timed once, cold and dirty flush before EACH dispatch, and
// the clock probes come first and last.
func TestTimingLoopLayout(t *testing.T) {
	for _, c := range []struct {
		mode     profiler.CacheMode
		canFlush bool
		flush    stepKind // the step before each start event; -1: none
	}{
		{profiler.CacheCold, true, stepFlush},
		{profiler.CacheDirty, true, stepDirty},
		{profiler.CacheHot, true, -1},
		{profiler.CacheCold, false, -1}, // no flush buffer: back to back
	} {
		for _, probing := range []bool{false, true} {
			const n, reps = 3, 4
			steps, spans, events := timingLoop(n, reps, c.mode, c.canFlush, probing)
			name := fmt.Sprintf("%s flush=%v probe=%v", c.mode, c.canFlush, probing)
			pos := map[int]int{} // event -> position of its record
			for i, st := range steps {
				if st.Kind == stepRecord {
					if _, dup := pos[st.Index]; dup || st.Index < 0 || st.Index >= events {
						t.Fatalf("%s: event %d recorded twice or out of range", name, st.Index)
					}
					pos[st.Index] = i
				}
			}
			if len(pos) != events {
				t.Errorf("%s: %d events recorded of %d", name, len(pos), events)
			}
			if len(spans) != n*reps {
				t.Fatalf("%s: %d spans, want %d", name, len(spans), n*reps)
			}
			for slot, sp := range spans {
				a, b := pos[sp[0]], pos[sp[1]]
				if a >= b {
					t.Fatalf("%s: slot %d's span ends before it starts", name, slot)
				}
				var inside []step
				for _, st := range steps[a+1 : b] {
					if st.Kind != stepRecord {
						inside = append(inside, st)
					}
				}
				if len(inside) != 1 || inside[0].Kind != stepLaunch || inside[0].Slot != slot || inside[0].Index != slot%n {
					t.Errorf("%s: slot %d's span holds %v, want only its launch", name, slot, inside)
				}
				if c.flush >= 0 && (a == 0 || steps[a-1].Kind != c.flush) {
					t.Errorf("%s: slot %d is not preceded by its flush", name, slot)
				}
			}
			probes := 0
			for _, st := range steps {
				if st.Kind == stepProbe {
					probes++
				}
			}
			if probing && (probes != 2 || steps[0].Kind != stepProbe || steps[len(steps)-1].Kind != stepProbe) {
				t.Errorf("%s: probes %d, first %v, last %v", name, probes, steps[0], steps[len(steps)-1])
			}
			if !probing && probes != 0 {
				t.Errorf("%s: %d probes without probing", name, probes)
			}
		}
	}
}

func TestExpectedOf(t *testing.T) {
	k := expectedOf(&profiler.Dispatch{Grid: [3]int{8, 2, 1}, Group: [3]int{128, 1, 1}}, 5)
	if k.Memset || k.Grid != [3]int32{8, 2, 1} || k.Block != [3]int32{128, 1, 1} || k.Slot != 5 {
		t.Errorf("kernel dispatch expected as %+v", k)
	}
	if z := expectedOf(&profiler.Dispatch{Zero: "dW"}, 2); !z.Memset || z.Slot != 2 {
		t.Errorf("zero fill expected as %+v", z)
	}
}
