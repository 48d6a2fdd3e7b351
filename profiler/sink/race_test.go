package sink

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// Every stop reason, outpaced (--race) among them, reads back from the
// CSV and from the JSON lines as it was written.
func TestStopReasonsRoundTrip(t *testing.T) {
	reasons := []string{profiler.StopPrecision, profiler.StopTimeLimit, profiler.StopMaxSamples, profiler.StopOutpaced}
	path := filepath.Join(t.TempDir(), "reasons.csv")
	s, err := OpenCSV(path, testCols, false)
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	js := NewJSON(&lines)
	for i, why := range reasons {
		r := richResult()
		r.Spec.Knobs["WG"] = 32 * (i + 1)
		r.StopReason = why
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := js.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	got, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	jsonRows := strings.Split(strings.TrimSpace(lines.String()), "\n")
	if len(got) != len(reasons) || len(jsonRows) != len(reasons) {
		t.Fatalf("%d CSV rows, %d JSON lines, wrote %d", len(got), len(jsonRows), len(reasons))
	}
	for i, why := range reasons {
		var back profiler.Result
		if err := json.Unmarshal([]byte(jsonRows[i]), &back); err != nil {
			t.Fatal(err)
		}
		if got[i].StopReason != why || back.StopReason != why {
			t.Errorf("%q read back as %q from the CSV, %q from JSON", why, got[i].StopReason, back.StopReason)
		}
	}
}

// --resume reads each done row's outcome (status, stop reason, median),
// which seeds the best of its shape for --race.
func TestReadDoneRowsKeepsTheOutcome(t *testing.T) {
	path := filepath.Join(t.TempDir(), "done.csv")
	s, err := OpenCSV(path, testCols, false)
	if err != nil {
		t.Fatal(err)
	}
	best, slow := richResult(), richResult()
	best.Status, best.StopReason = profiler.StatusOK, profiler.StopPrecision
	slow.Spec.Knobs["WG"] = 32
	slow.Status, slow.StopReason, slow.Stats.Median = profiler.StatusOK, profiler.StopOutpaced, 3500
	s.Write(best)
	s.Write(slow)
	s.Close()
	done, err := ReadDoneRows(path, testCols)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []profiler.Result{best, slow} {
		row, ok := done[want.Spec.Key()]
		r := row.Result()
		if !ok || r.Status != want.Status || r.StopReason != want.StopReason || r.Stats.Median != want.Stats.Median || r.Cache != want.Cache || r.Settle != want.Settle {
			t.Errorf("%s: read %+v (%v), want status %s, stop %q, median %g", want.Spec.Key(), row, ok, want.Status, want.StopReason, want.Stats.Median)
		}
	}
}
