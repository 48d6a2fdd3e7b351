package profiler

import (
	"encoding/json"
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

// VerifyGPU is the device's part of Verify: summed by Add, counted once
// in Total (inside Verify), and printed with verify.
func TestPhasesVerifyGPUInsideVerify(t *testing.T) {
	var a Phases
	a.Add(Phases{Verify: 0.002, VerifyGPU: 0.0015, Measure: 0.006})
	a.Add(Phases{Verify: 0.002, VerifyGPU: 0.0005})
	if a.VerifyGPU != 0.002 || a.Verify != 0.004 || a.Total() != 0.01 {
		t.Errorf("verify %v (GPU %v), total %v; want 0.004 (0.002) and 0.01", a.Verify, a.VerifyGPU, a.Total())
	}
	for _, c := range []struct {
		p    Phases
		want string
	}{
		{a, "verify 4.0 ms (40%, 2.0 ms of it running kernels)  measure 6.0 ms (60%)"},
		{Phases{Verify: 0.004, Measure: 0.006}, "verify 4.0 ms (40%)  measure 6.0 ms (60%)"}, // not timed: nothing said
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}

// verify_gpu goes through JSON (the worker's results do) and is left out
// when the backend did not time the run.
func TestPhasesVerifyGPUJSON(t *testing.T) {
	in := Phases{Verify: 0.0013, VerifyGPU: 0.0011, Measure: 0.04}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"verify_gpu":0.0011`) {
		t.Errorf("json %s has no verify_gpu", raw)
	}
	var out Phases
	if err := json.Unmarshal(raw, &out); err != nil || out != in {
		t.Errorf("round trip %+v %v, want %+v", out, err, in)
	}
	if raw, _ := json.Marshal(Phases{Verify: 0.001}); strings.Contains(string(raw), "verify_gpu") {
		t.Errorf("untimed verification run, yet %s", raw)
	}
}
