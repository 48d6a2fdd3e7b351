package cli

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
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
	if err := announce(run.SweepPlan{Specs: len(jobs), Exact: true, Estimate: run.Estimate(jobs, nil)}, "s.yaml", false, &b); err != nil {
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
	if err := announce(run.SweepPlan{Invalid: len(jobs), Exact: true, Device: &dev, Estimate: run.Estimate(nil, &dev)}, "s.yaml", false, &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); regexp.MustCompile(`\b0 s\b`).MatchString(out) || strings.Contains(out, "measuring") || !strings.Contains(out, "2 invalid") {
		t.Errorf("all invalid: want no measuring time:\n%s", out)
	}
}

// TestRunRefusesBeforeEstimating: a long spec gets its estimate; the same
// spec on a device without the memory for it gets none (it is refused).
func TestRunRefusesBeforeEstimating(t *testing.T) {
	big, err := parseSpec("attn_fwd", "f32", []string{"Lq=4096,Lk=4096,H=32,B=8,D=128"})
	if err != nil {
		t.Fatal(err)
	}
	job := profiler.Job{Spec: big, Options: profiler.DefaultOptions()}
	roomy := profiler.DeviceInfo{Backend: "cuda", Name: "test", Units: 1, MemoryBytes: 1 << 40, PeakFLOPS: map[profiler.DType]float64{profiler.F32: 1e11}, TGMPerGroup: 1 << 20, MaxThreadsPerGroup: 1024}
	if got := runNotice(roomy, job); !strings.Contains(got, "per kernel run") {
		t.Fatalf("a long spec that fits: notice %q, want the estimate", got)
	}
	small := roomy
	small.MemoryBytes = 1 << 20
	if got := runNotice(small, job); got != "" {
		t.Errorf("a spec the device has no memory for: notice %q, want none (refuse first)", got)
	}
}

// TestRunSaysTheInvalidReasonOnce: the exit message on stderr gives the
// reason; the result block on stdout does not repeat it.
func TestRunSaysTheInvalidReasonOnce(t *testing.T) {
	const reason = "32-bit indices address"
	args := []string{"run", "attn_fwd", "--backend", "cpu", "--isolate", "off", "--set", "B=64,H=64,Hkv=64,Lq=65536,Lk=65536,D=128"}
	code, stdout, stderr := runMain(t, args...)
	if code != exitBadInput || strings.Count(stdout+stderr, reason) != 1 || !strings.Contains(stderr, "invalid spec: ") || !strings.Contains(stdout, "status     invalid\n") {
		t.Errorf("exit %d, want 2 and the reason once:\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = runMain(t, append(args, "--json")...)
	if code != exitBadInput || !strings.Contains(stderr, reason) {
		t.Errorf("--json: exit %d, want 2 and the reason on stderr:\n%s", code, stderr)
	}
}

// TestSetTakesIntegralFloats: --set reads numbers as the YAML loader does.
func TestSetTakesIntegralFloats(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"64", 64, ""},
		{"64.0", 64, ""},
		{"6.4e1", 64, ""},
		{"-3", -3, ""},
		{"64.5", 0, `"64.5" is not a whole number`},
		{"BQ", 0, `"BQ" is not an integer`},
		{"1e300", 0, "not a whole number"},
	} {
		n, err := parseWholeNumber(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %d, %v; want an error with %q", tc.in, n, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.in, n, err, tc.want)
		}
	}
	spec, err := parseSpec("attn_fwd", "f32", []string{"BQ=64.0"})
	if err != nil || spec.Knobs["BQ"] != 64 {
		t.Errorf("--set BQ=64.0: %v %v, want BQ=64 as in YAML", spec.Knobs, err)
	}
}

// TestRunSaysWhyAUserKernelCannotRunFirst: on the CPU backend a user kernel
// is invalid; with stdout and stderr on one terminal, the reason comes
// before the result block (not after its TGM table), once, and --json
// stays one valid JSON object on stdout.
func TestRunSaysWhyAUserKernelCannotRunFirst(t *testing.T) {
	const reason = "the CPU backend cannot run user kernel"
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("test_cpu_refused_k"), "k.cu": usertest.Source})
	args := []string{"run", path, "--backend", "cpu", "--isolate", "off"}
	var term bytes.Buffer
	code := Main(args, &term, &term)
	out := term.String()
	at, block := strings.Index(out, reason), strings.Index(out, "status     invalid")
	if code != exitBadInput || strings.Count(out, reason) != 1 || at < 0 || block < 0 || at > block {
		t.Errorf("exit %d, want 2 and the reason once, before the block:\n%s", code, out)
	}
	code, stdout, stderr := runMain(t, append(args, "--json")...)
	var v map[string]any
	if code != exitBadInput || json.Unmarshal([]byte(stdout), &v) != nil || v["status"] != "invalid" || !strings.Contains(stderr, reason) {
		t.Errorf("--json: exit %d, stdout not one JSON result or no reason on stderr:\n%s\n%s", code, stdout, stderr)
	}
}
