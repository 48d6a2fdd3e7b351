package cpu

import (
	"bytes"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// Cold reads the flush buffer (its lines stay clean), dirty writes every
// line of it, hot does not touch it.
func TestFlushModes(t *testing.T) {
	pb, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b := pb.(*Backend)
	b.info.CacheBytes = 1 << 20
	b.info.MemoryBytes = 1 << 20 // keeps the buffer at its 64 MiB floor
	buf, err := b.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	d := &profiler.Dispatch{Name: "zero", Zero: "x"}
	ls := []profiler.Launch{{Dispatch: d, Zero: buf}}
	if _, err := b.Time(ls, 1, profiler.CacheCold); err != nil {
		t.Fatal(err)
	}
	if len(b.flush) == 0 || b.flush[0] != 1 || b.flush[64] != 0 {
		t.Fatalf("the buffer's pages are written once when made (one byte per page), not per line: %d %d", b.flush[0], b.flush[64])
	}
	before := bytes.Clone(b.flush)
	if _, err := b.Time(ls, 2, profiler.CacheCold); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, b.flush) {
		t.Error("the cold flush wrote to its buffer: it must leave clean lines")
	}
	if _, err := b.Time(ls, 2, profiler.CacheHot); err != nil || !bytes.Equal(before, b.flush) {
		t.Errorf("hot touched the buffer (%v)", err)
	}
	if _, err := b.Time(ls, 1, profiler.CacheDirty); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{64, 128, len(b.flush) - 64} {
		if b.flush[i] != before[i]+1 {
			t.Errorf("dirty did not write line %d", i/64)
		}
	}
}

// Cold and dirty prepare the caches before every dispatch, not once per
// rep (as CUDA and ncu's --cache-control all); hot never.
func TestFlushPerDispatch(t *testing.T) {
	pb, err := New()
	if err != nil {
		t.Fatal(err)
	}
	b := pb.(*Backend)
	b.info.CacheBytes = 1 << 20
	b.info.MemoryBytes = 1 << 20
	buf, err := b.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	d := &profiler.Dispatch{Name: "zero", Zero: "x"}
	ls := []profiler.Launch{{Dispatch: d, Zero: buf}, {Dispatch: d, Zero: buf}, {Dispatch: d, Zero: buf}}
	for _, c := range []struct {
		mode profiler.CacheMode
		want int
	}{{profiler.CacheCold, 6}, {profiler.CacheDirty, 6}, {profiler.CacheHot, 0}} {
		before := b.flushes
		tm, err := b.Time(ls, 2, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.flushes - before; got != c.want {
			t.Errorf("%s: %d flushes for 2 reps of 3 dispatches, want %d", c.mode, got, c.want)
		}
		if len(tm.Samples) != 2 || len(tm.Samples[0]) != 3 {
			t.Errorf("%s: samples %v", c.mode, tm.Samples)
		}
	}
	before := b.flushes
	if _, err := b.Time(ls, 1, profiler.CacheCold); err != nil || b.flushes-before != 3 {
		t.Errorf("Time(cold): %d flushes for 3 dispatches (%v)", b.flushes-before, err)
	}
}
