package profiler

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A verdict with infinite and NaN errors (a broken kernel writing Inf)
// encodes, and reads back the same; finite values stay plain numbers.
func TestVerdictJSONNonFinite(t *testing.T) {
	in := Result{Status: StatusMismatch, Verdict: &Verdict{MaxAbsErr: math.Inf(1), MaxRelErr: math.NaN(), RMSErr: math.Inf(-1), WorstRatio: 2.5, Mismatches: 3}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("a verdict with Inf does not encode: %v", err)
	}
	for _, want := range []string{`"max_abs_err":"+Inf"`, `"max_rel_err":"NaN"`, `"rms_err":"-Inf"`, `"worst_over_bound":2.5`, `"mismatches":3`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var out Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	v := out.Verdict
	if !math.IsInf(v.MaxAbsErr, 1) || !math.IsNaN(v.MaxRelErr) || !math.IsInf(v.RMSErr, -1) || v.WorstRatio != 2.5 || v.Mismatches != 3 {
		t.Errorf("read back %+v", v)
	}
}
