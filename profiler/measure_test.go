package profiler

import (
	"strings"
	"testing"
)

func TestParseCacheMode(t *testing.T) {
	for in, want := range map[string]CacheMode{"": CacheCold, "cold": CacheCold, "HOT": CacheHot, " dirty": CacheDirty} {
		if got, err := ParseCacheMode(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := ParseCacheMode("warm"); err == nil || !strings.Contains(err.Error(), "dirty") {
		t.Errorf("warm: %v", err)
	}
	if (Options{}).CacheMode() != CacheCold || (Options{Cache: CacheDirty}).CacheMode() != CacheDirty || DefaultOptions().Cache != CacheCold {
		t.Error("Options.CacheMode: unset must be cold, a set mode itself")
	}
}

func TestPhasesAdd(t *testing.T) {
	var a Phases
	a.Add(Phases{Measure: 1, Worker: 0.5})
	a.Add(Phases{Measure: 2, Compile: 1})
	if a.Measure != 3 || a.Worker != 0.5 || a.Compile != 1 || a.Total() != 4.5 {
		t.Errorf("%+v", a)
	}
}

// Work done ahead of a spec is summed and printed, but is not part of its
// wall time (Total) nor of the shares.
func TestPhasesAheadOutsideTotal(t *testing.T) {
	var a Phases
	a.Add(Phases{Compile: 0.001, Measure: 0.003, Ahead: 0.0005})
	a.Add(Phases{Ahead: 0.0005})
	if a.Ahead != 0.001 || a.Total() != 0.004 {
		t.Errorf("ahead %v total %v, want 0.001 and 0.004", a.Ahead, a.Total())
	}
	got := a.String()
	want := "compile 1.0 ms (25%)  measure 3.0 ms (75%)  ahead 1.0 ms (off the critical path)"
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s := (Phases{Measure: 0.002}).String(); strings.Contains(s, "ahead") {
		t.Errorf("no work ahead, yet %q", s)
	}
}
