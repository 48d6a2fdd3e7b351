package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/units"
)

// TestFlagErrors: a bad flag is one line naming it, with a did-you-mean or
// the commands that take it, and a pointer to mltop --help; never the usage.
func TestFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--conifg", "x.yaml"}, []string{"unknown flag --conifg", "did you mean --config?", "see mltop --help"}},
		{[]string{"run", "attn_fwd", "--sett", "BQ=32"}, []string{"run: unknown flag --sett", "did you mean --set?"}},
		{[]string{"run", "attn_fwd", "--shard", "0/2"}, []string{"--shard is a sweep flag: use it with --config FILE"}},
		{[]string{"run", "attn_fwd", "--devices", "all"}, []string{"--devices is a sweep flag"}},
		{[]string{"run", "attn_fwd", "--config", "s.yaml"}, []string{"run: unknown flag --config: a sweep file runs on its own, as mltop --config FILE [--csv out.csv], not with mltop run"}},
		{[]string{"--config", "s.yaml", "list"}, []string{"list: unknown flag --config: a sweep file runs on its own"}},
		{[]string{"merge", "a.csv", "-o", "m.csv", "--json"}, []string{"merge: unknown flag --json: --json is a flag of mltop, mltop run, mltop watch"}},
		{[]string{"report", "--bakend", "cpu"}, []string{"report: unknown flag --bakend", "did you mean --backend (a flag of mltop)?"}},
		{[]string{"list", "--zzzzzz"}, []string{"list: unknown flag --zzzzzz; see mltop --help"}},
		{[]string{"run", "attn_fwd", "--seed", "x"}, []string{`run: --seed=x: use a whole number, 0 or more`, "see mltop --help"}},
		{[]string{"run", "attn_fwd", "--set"}, []string{"run: flag needs an argument: --set"}},
		{[]string{"lsit"}, []string{`unknown command "lsit": did you mean list?`}},
		{[]string{"nosuchthing", "--json"}, []string{`unknown command "nosuchthing": use run`}},
	}
	for _, c := range cases {
		code, _, stderr := runMain(t, c.args...)
		if code != exitBadInput {
			t.Errorf("%q: exit %d, want 2", c.args, code)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
			t.Errorf("%q: %d lines, want one:\n%s", c.args, n+1, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%q: %q lacks %q", c.args, stderr, w)
			}
		}
		if strings.Contains(stderr, "mltop run list") || strings.Contains(stderr, "Usage:") {
			t.Errorf("%q: %q", c.args, stderr)
		}
	}
}

// TestGlobalFlagsBeforeCommand: flags of mltop given before a subcommand
// reach it (mltop --backend cpu list), after it too (list --backend cpu);
// a flag the subcommand does not take is named, not "mltop run list".
func TestGlobalFlagsBeforeCommand(t *testing.T) {
	for _, args := range [][]string{
		{"--backend", "cpu", "list"},
		{"list", "--backend", "cpu"},
		{"--no-color", "list"},
		{"--backend=cpu", "--quiet", "list", "--no-color"},
	} {
		code, stdout, stderr := runMain(t, args...)
		if code != exitOK || !strings.Contains(stdout, "Kernel families:") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	code, _, stderr := runMain(t, "--json", "list")
	if code != exitBadInput || !strings.Contains(stderr, "list: unknown flag --json") || strings.Contains(stderr, "mltop run list") {
		t.Errorf("--json list: exit %d, %q", code, stderr)
	}
	code, _, stderr = runMain(t, "--backend", "cpu", "nosuch")
	if code != exitBadInput || !strings.Contains(stderr, `unexpected argument "nosuch": commands are run`) {
		t.Errorf("--backend cpu nosuch: exit %d, %q", code, stderr)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"config", "conifg", 1}, {"set", "sett", 1}, {"", "abc", 3}, {"backend", "bakcend", 1}, {"json", "bench", 5}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// TestSetBoolLikeYAML: --set reads a family flag as a sweep file does.
func TestSetBoolLikeYAML(t *testing.T) {
	for _, c := range []struct {
		v    string
		ok   bool
		want bool
	}{{"maybe", false, false}, {"2", false, false}, {"yes", true, true}, {"off", true, false}, {"1", true, true}, {"FALSE", true, false}} {
		spec, err := parseSpec("attn_fwd", "", []string{"causal=" + c.v})
		if !c.ok {
			if err == nil || !strings.Contains(err.Error(), "is not a boolean: use true/false, 1/0, yes/no or on/off") || !strings.Contains(err.Error(), "causal="+c.v) {
				t.Errorf("causal=%s: %v, want the boolean error", c.v, err)
			}
			continue
		}
		if err != nil || spec.Flags["causal"] != c.want {
			t.Errorf("causal=%s: %v %v", c.v, spec.Flags, err)
		}
	}
	if _, err := parseSpec("attn_fwd", "", []string{"BQ=yes"}); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("BQ=yes: %v, want not an integer", err)
	}
}

// TestRunEstimate: a long CPU run is announced with the rule of at least
// three runs; a short one says nothing.
func TestRunEstimate(t *testing.T) {
	dev := profiler.DeviceInfo{Backend: "cpu", Units: 4}
	big, err := parseSpec("attn_fwd", "", []string{"Lq=4096,Lk=4096,H=32,B=8,D=128"})
	if err != nil {
		t.Fatal(err)
	}
	msg := runEstimate(dev, big)
	for _, w := range []string{"per kernel run on the cpu backend", "TFLOP", "at least 3 runs (verify, warm-up, one sample)", "--time-limit bounds only the sampling"} {
		if !strings.Contains(msg, w) {
			t.Errorf("estimate %q lacks %q", msg, w)
		}
	}
	small, _ := parseSpec("attn_fwd", "", []string{"Lq=64,Lk=64,H=1,B=1"})
	if msg := runEstimate(dev, small); msg != "" {
		t.Errorf("small spec: %q, want nothing", msg)
	}
}

// TestSweepBannerEstimate: a sweep's banner says what `mltop run` says of
// a long kernel run (the same note, from the same estimate) for its
// slowest spec, and the measuring range counts at least three runs of it;
// without a device (several, not opened yet) it says neither.
func TestSweepBannerEstimate(t *testing.T) {
	dev := profiler.DeviceInfo{Backend: "cpu", Units: 4}
	big, err := parseSpec("attn_fwd", "f32", []string{"Lq=4096,Lk=4096,H=32,B=8,D=128"})
	if err != nil {
		t.Fatal(err)
	}
	small, _ := parseSpec("attn_fwd", "f32", []string{"Lq=64,Lk=64,H=1,B=1"})
	opt := profiler.DefaultOptions()
	opt.Warmup, opt.Stop.MinTime, opt.Stop.MaxTime = 0.5, 1, 10
	jobs := []profiler.Job{{Spec: big, Options: opt}, {Spec: small, Options: opt}}
	var b bytes.Buffer
	if err := announce(planOf(jobs, &dev), "s.yaml", false, &b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log(out)
	note := kernelRunNote(dev, big)
	d, _, _ := run.KernelRunTime(dev, big)
	if note == "" || d < run.SlowRun || !strings.HasPrefix(runEstimate(dev, big), note) {
		t.Fatalf("the big spec: note %q, run %v, mltop run says %q", note, d, runEstimate(dev, big))
	}
	lo := units.Span(3*d + 1500*time.Millisecond)
	for _, want := range []string{
		"2 specs to run from s.yaml",
		"at least 3 kernel runs of the slow specs",
		"slow kernels in 1 of 2 specs (2 s or more per kernel run); the slowest, " + big.String() + ": " + note + "; time_limit bounds only the sampling",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "measuring takes "+lo+" to ") && !strings.Contains(out, "measuring takes about "+lo) {
		t.Errorf("banner lacks the range from %s:\n%s", lo, out)
	}
	b.Reset()
	if err := announce(planOf(jobs, nil), "s.yaml", false, &b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "slow") || !strings.Contains(out, "measuring takes 3 s to 21 s") {
		t.Errorf("banner without a device:\n%s", out)
	}
}

// planOf is the plan run.PlanSweep makes of jobs, all runnable, on dev.
func planOf(jobs []profiler.Job, dev *profiler.DeviceInfo) run.SweepPlan {
	return run.SweepPlan{Specs: len(jobs), Exact: true, Device: dev, Estimate: run.Estimate(jobs, dev)}
}

// --dtype takes one dtype: a list says so, with the kernel's dtypes and
// the loop that runs each; an unknown one names the kernel's dtypes too.
func TestDTypeListRefused(t *testing.T) {
	f, err := profiler.Lookup("softmax_bwd")
	if err != nil {
		t.Fatal(err)
	}
	have := profiler.JoinDTypes(f.Schema().DTypes)
	for _, c := range []struct{ dtype, want string }{
		{"f32,bf16", "--dtype f32,bf16: one dtype a run (softmax_bwd has " + have + "); run once per dtype: for d in f32 bf16; do mltop … --dtype $d; done"},
		{"f33", `--dtype: unknown dtype "f33": use one of f32, f16, bf16 (softmax_bwd has ` + have + ")"},
	} {
		if _, err := parseSpec("softmax_bwd", c.dtype, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--dtype %s: %v, want %q", c.dtype, err, c.want)
		}
	}
}
