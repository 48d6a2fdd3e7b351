package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

func TestDurationRange(t *testing.T) {
	for _, tc := range []struct {
		lo, hi time.Duration
		want   string
	}{
		{2 * time.Second, 12 * time.Second, "2 s to 12 s"},
		{time.Duration(2.6 * float64(time.Hour)), time.Duration(2.62 * float64(time.Hour)), "about 2.6 h"},
		{0, 0, "under 1 s"},
		{100 * time.Millisecond, 300 * time.Millisecond, "under 1 s"},
		{100 * time.Millisecond, 5 * time.Second, "up to 5 s"},
		{3 * time.Second, 3 * time.Second, "about 3 s"},
	} {
		if got := durationRange(tc.lo, tc.hi); got != tc.want {
			t.Errorf("durationRange(%v, %v) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestBannerSaysTheRangeOnce: equal ends are said once ("about"), and a
// sweep with nothing to measure says no time at all (never "0 s").
func TestBannerSaysTheRangeOnce(t *testing.T) {
	small, err := parseSpec("attn_fwd", "f32", []string{"Lq=64,Lk=64,H=1,B=1"})
	if err != nil {
		t.Fatal(err)
	}
	opt := profiler.DefaultOptions()
	opt.Warmup, opt.Stop.MinTime, opt.Stop.MaxTime = 0.5, 1, 1
	jobs := []profiler.Job{{Spec: small, Options: opt}, {Spec: small, Options: opt}}
	var b bytes.Buffer
	if err := announce(jobs, nil, "s.yaml", false, nil, &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "measuring takes about 3 s (") {
		t.Errorf("equal ends: want the time said once:\n%s", out)
	}
	// Knobs the family refuses: every spec is invalid, nothing is measured.
	bad := small.Clone()
	bad.Knobs["BQ"] = 7
	jobs = []profiler.Job{{Spec: bad, Options: opt}, {Spec: bad, Options: opt}}
	dev := profiler.DeviceInfo{Backend: "cpu", Units: 1}
	b.Reset()
	if err := announce(jobs, nil, "s.yaml", false, &dev, &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); regexp.MustCompile(`\b0 s\b`).MatchString(out) || strings.Contains(out, "measuring") || !strings.Contains(out, "2 invalid") {
		t.Errorf("all invalid: want no measuring time:\n%s", out)
	}
}
