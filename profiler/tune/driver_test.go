package tune

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/units"
)

func newCfg(base profiler.Spec, l *search.Landscape, strategy, budget string) Config {
	return Config{Base: base, Knobs: testKnobs, Strategy: strategy, Seed: 1, Budget: must(search.ParseBudget(budget)),
		Allow:   func(s profiler.Spec) error { return l.Allow(s.Knobs) },
		Options: profiler.DefaultOptions()}
}

// A TPE search through the job loop finds the landscape's best within 2%
// using 10% of the configurations, writes one marked row per measurement
// and re-measures the three best.
func TestSearchFindsBestThroughTheJobLoop(t *testing.T) {
	base := shapeSpec(4096, 8192, profiler.BF16)
	l := search.Synthetic(2, testKnobs)
	rep := NewReplay(testDev, landscapeRows(l, base, 0.005))
	var log bytes.Buffer
	cfg := newCfg(base, l, "tpe", "10%")
	cfg.Log = &log
	var got recordSink
	out, err := Search(context.Background(), rep, cfg, []profiler.Sink{&got})
	if err != nil {
		t.Fatal(err)
	}
	sp := must(search.NewSpace(testKnobs, func(v map[string]int) error {
		if v["WG"] == 4096 && v["VEC"] == 32 {
			return errors.New("rule")
		}
		return l.Allow(v)
	}))
	want, _ := l.Best(sp)
	if gap := out.Winner().Stats.Median/want - 1; gap > 0.02 {
		t.Errorf("winner %s at %.0f ns is %.1f%% off the best %.0f", KnobText(out.Winner().Spec.Knobs, []string{"WG", "VEC", "RPG", "RB"}), out.Winner().Stats.Median, 100*gap, want)
	}
	budget := (out.Space + 9) / 10
	if out.Measured != budget || out.Space != sp.Size() || out.Excluded != 1440-sp.Size() {
		t.Errorf("measured %d of space %d (excluded %d): want the budget %d of %d", out.Measured, out.Space, out.Excluded, budget, sp.Size())
	}
	if len(got.rows) != budget+3 || len(out.Finalists) != 3 {
		t.Fatalf("%d rows written, %d finalists: want %d and 3", len(got.rows), len(out.Finalists), budget+3)
	}
	for k, r := range got.rows {
		switch {
		case r.Search == nil:
			t.Fatalf("row %d has no search step", k)
		case k < budget && (r.Search.Step != k+1 || r.Search.Final):
			t.Errorf("row %d has step %+v, want %d", k, r.Search, k+1)
		case k >= budget && !r.Search.Final:
			t.Errorf("re-measurement row %d not marked final: %+v", k, r.Search)
		}
		if r.Spec.Knobs["WG"] == 4096 && r.Spec.Knobs["VEC"] == 32 {
			t.Errorf("the family's rule was not applied before measuring: %s", r.Spec)
		}
	}
	if !strings.Contains(log.String(), "tpe search over") || !out.Compare.Known {
		t.Errorf("log %q, comparison %+v", log.String(), out.Compare)
	}
	// the first line says how long measuring the budget and the
	// re-measurements takes, as a sweep of that many specs would
	one := run.Estimate([]profiler.Job{{Spec: cfg.Base, Options: cfg.Options}}, &testDev)
	n := time.Duration(budget + 3)
	says := fmt.Sprintf("measuring takes about %s to %s", units.Elapsed(n*one.Lo), units.Elapsed(n*one.Hi))
	if n*one.Hi >= time.Minute {
		says = fmt.Sprintf("measuring takes about %s to %s", units.Span(n*one.Lo), units.Span(n*one.Hi))
	}
	if !strings.Contains(log.String(), says) {
		t.Errorf("log %q lacks %q", log.String(), says)
	}
}

type recordSink struct{ rows []profiler.Result }

func (s *recordSink) Write(r profiler.Result) error { s.rows = append(s.rows, r); return nil }
func (s *recordSink) Close() error                  { return nil }

// A budget larger than the space measures every configuration once and
// says so.
func TestBudgetOverSpaceRunsExhaustively(t *testing.T) {
	base := shapeSpec(64, 64, profiler.F32)
	base.Knobs = map[string]int{"RPG": 1, "RB": 1}
	l := search.Synthetic(4, testKnobs)
	rep := NewReplay(testDev, landscapeRows(l, base, 0.01))
	cfg := newCfg(base, l, "tpe", "500")
	cfg.Knobs = testKnobs[:2]
	var log bytes.Buffer
	cfg.Log = &log
	out, err := Search(context.Background(), rep, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Exhaustive || out.Measured != out.Space || !strings.Contains(log.String(), "measuring every one (exhaustive)") || !strings.Contains(out.Stop, "exhaustive") {
		t.Errorf("exhaustive %v, measured %d of %d, stop %q, log %q", out.Exhaustive, out.Measured, out.Space, out.Stop, log.String())
	}
	for k, n := range rep.Runs {
		if n > 1+1 { // a finalist runs twice: searched and re-measured
			t.Errorf("%s ran %d times", k, n)
		}
	}
}

func TestEmptySpaceAndAllInvalid(t *testing.T) {
	base := shapeSpec(64, 64, profiler.F32)
	l := search.Synthetic(5, testKnobs)
	cfg := newCfg(base, l, "random", "20")
	cfg.Allow = func(profiler.Spec) error { return errors.New("where: rows > 1e9") }
	rep := NewReplay(testDev, nil)
	_, err := Search(context.Background(), rep, cfg, nil)
	if !errors.Is(err, search.ErrEmpty) || !strings.Contains(err.Error(), "where: rows > 1e9") || len(rep.Runs) != 0 {
		t.Errorf("empty space: %v (runs %d)", err, len(rep.Runs))
	}
	// Every configuration the oracle allows is refused when run.
	cfg = newCfg(base, l, "random", "20")
	var got recordSink
	out, err := Search(context.Background(), rep, cfg, []profiler.Sink{&got})
	if !errors.Is(err, ErrNoValid) || !strings.Contains(err.Error(), "20 invalid") || !strings.Contains(err.Error(), "not in the recorded landscape") {
		t.Errorf("all invalid: %v", err)
	}
	if len(got.rows) != 20 || out == nil || out.Measured != 20 {
		t.Errorf("the %d invalid rows must reach the sinks: got %d", 20, len(got.rows))
	}
}

// --resume: the rows of the file are told to the strategy, not measured
// again, and the search goes on to the same budget.
func TestResumeTellsRowsAlreadyMeasured(t *testing.T) {
	base := shapeSpec(1024, 1024, profiler.F32)
	l := search.Synthetic(6, testKnobs)
	rows := landscapeRows(l, base, 0.01)
	path := filepath.Join(t.TempDir(), "tune.csv")
	cols := sink.ColumnsFor([]profiler.Spec{base})
	cols.Search = true
	first := must(sink.OpenCSV(path, cols, false))
	cfg := newCfg(base, l, "evolution", "40")
	cfg.Budget = search.Budget{Evals: 25}
	if _, err := Search(context.Background(), NewReplay(testDev, rows), cfg, []profiler.Sink{first}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	done := must(sink.ReadCSV(path))
	rep := NewReplay(testDev, rows)
	cfg.Budget, cfg.Resume = search.Budget{Evals: 40}, done
	out, err := Search(context.Background(), rep, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Resumed != 25 || out.Measured != 15 {
		t.Errorf("resumed %d, measured %d: want 25 told and 15 new", out.Resumed, out.Measured)
	}
	for _, r := range done {
		if r.Search != nil && !r.Search.Final && rep.Runs[r.Spec.Key()] > 1 {
			t.Errorf("%s was measured again", r.Spec)
		}
	}
}

func TestMinImprovementStops(t *testing.T) {
	base := shapeSpec(64, 128, profiler.F32)
	l := search.Synthetic(8, testKnobs)
	cfg := newCfg(base, l, "random", "400")
	cfg.MinImprovement, cfg.Patience = 0.5, 10
	out, err := Search(context.Background(), NewReplay(testDev, landscapeRows(l, base, 0.01)), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Measured >= 400 || !strings.Contains(out.Stop, "min_improvement") {
		t.Errorf("measured %d, stop %q: want an early stop by min_improvement", out.Measured, out.Stop)
	}
}

func TestCompare(t *testing.T) {
	mk := func(wg int, med, lo, hi float64) profiler.Result {
		return profiler.Result{Spec: profiler.Spec{Knobs: map[string]int{"WG": wg}}, Status: profiler.StatusOK,
			Stats: profiler.Stats{N: 30, Median: med * 1e3, CILo: lo * 1e3, CIHi: hi * 1e3}}
	}
	for _, c := range []struct {
		a, b       profiler.Result
		tied, know bool
		text       string
		standing   string // of a table entry with this verdict
	}{
		{mk(128, 50, 49.8, 50.3), mk(256, 53, 52.7, 53.4), false, true, "6.0% faster, the 95% intervals of the medians do not overlap", "ahead"},
		{mk(128, 50, 49.5, 50.6), mk(256, 50.4, 50.1, 50.9), true, true, "tied within noise", "tied within noise"},
		{mk(128, 50, 0, 0), mk(256, 53, 0, 0), false, false, "without confidence intervals", "unproven"},
	} {
		got := Compare(MedianUS, []profiler.Result{c.a, c.b}, []string{"WG"})
		if got.Tied != c.tied || got.Known != c.know || !strings.Contains(got.Text, c.text) || !strings.Contains(got.Text, "WG=128") {
			t.Errorf("Compare = %+v: want tied %v known %v and %q", got, c.tied, c.know, c.text)
		}
		if s := (Entry{Tied: got.Tied, Verdict: got.Text}).Standing(); s != c.standing {
			t.Errorf("%q: standing %q, want %q", got.Text, s, c.standing)
		}
	}
	alone := Compare(MedianUS, []profiler.Result{mk(128, 50, 49.8, 50.3)}, []string{"WG"})
	if s := (Entry{Tied: alone.Tied, Verdict: alone.Text}).Standing(); s != "unproven" {
		t.Errorf("no runner-up: standing %q, want unproven", s)
	}
}

func TestParseObjective(t *testing.T) {
	for _, s := range []string{"", "median_us", "TFLOPS", "gbps"} {
		if _, err := ParseObjective(s); err != nil {
			t.Errorf("ParseObjective(%q): %v", s, err)
		}
	}
	if _, err := ParseObjective("p99_us"); err == nil || !strings.Contains(err.Error(), `"p99_us"`) || !strings.Contains(err.Error(), "median_us, tflops, gbps") {
		t.Errorf("ParseObjective(p99_us) = %v", err)
	}
	r := profiler.Result{Status: profiler.StatusOK, Stats: profiler.Stats{N: 5, Median: 2000}, GBps: 300}
	if c, ok := GBps.Cost(r); !ok || c != -300 {
		t.Errorf("gbps cost %v %v: want -300", c, ok)
	}
	if c, ok := MedianUS.Cost(r); !ok || c != 2 {
		t.Errorf("median cost %v %v: want 2 µs", c, ok)
	}
	r.Status = profiler.StatusMismatch
	if _, ok := MedianUS.Cost(r); ok {
		t.Error("a mismatch has a cost: a wrong kernel could win")
	}
}

// A time budget stops the search on the clock (a fake one here: each look
// at it is a second later).
func TestTimeBudgetStops(t *testing.T) {
	base := shapeSpec(256, 256, profiler.F32)
	l := search.Synthetic(9, testKnobs)
	cfg := newCfg(base, l, "random", "5s")
	cfg.Batch = 1
	var log bytes.Buffer
	cfg.Log = &log
	now := time.Unix(0, 0)
	cfg.Now = func() time.Time { now = now.Add(time.Second); return now }
	out, err := Search(context.Background(), NewReplay(testDev, landscapeRows(l, base, 0.01)), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Measured == 0 || out.Measured > 5 || !strings.Contains(out.Stop, "time budget spent (5s)") || out.Exhaustive {
		t.Errorf("measured %d, stop %q: want a few and the time budget", out.Measured, out.Stop)
	}
	if strings.Contains(log.String(), "measuring takes") {
		t.Errorf("a time budget is its own estimate: %q", log.String())
	}
}

// Successive halving measures most points briefly (rows marked 1/9 and
// 1/3, with a share of the time limit) and only contenders in full.
func TestHalvingThroughTheDriver(t *testing.T) {
	base := shapeSpec(512, 512, profiler.F32)
	l := search.Synthetic(10, testKnobs)
	var got recordSink
	out, err := Search(context.Background(), NewReplay(testDev, landscapeRows(l, base, 0.01)), newCfg(base, l, "halving", "30"), []profiler.Sink{&got})
	if err != nil {
		t.Fatal(err)
	}
	brief, full := 0, 0
	for _, r := range got.rows {
		switch {
		case r.Search.Final:
		case r.Search.Fidelity < 1:
			brief++
		default:
			full++
		}
	}
	if brief < 3*full || full == 0 || out.Spent > 30+1e-9 || len(out.Finalists) == 0 {
		t.Errorf("%d brief and %d full measurements, %.2f spent of 30, %d finalists", brief, full, out.Spent, len(out.Finalists))
	}
	o := BriefOptions(profiler.DefaultOptions(), 1.0/9)
	if d := profiler.DefaultOptions(); o.Stop.MaxTime >= d.Stop.MaxTime || o.Stop.MinSamples < 3 {
		t.Errorf("brief options %+v", o.Stop)
	}
}
