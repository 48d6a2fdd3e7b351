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
