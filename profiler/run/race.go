package run

import (
	"fmt"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// raceBoard is what a sweep run with --race (Options.Race) knows of each
// shape (jobShape: the specs that share inputs and a reference): the best
// median measured so far. Each spec samples with a bound of its Race
// factor times that best (StopRule.Outpaced) and stops, outpaced, once it
// is clearly above it. The first spec of a shape has no bound. Safe for
// the devices of a multi-device sweep to share: a bound read while
// another device measures the shape's new best is only a little stale.
// A nil *raceBoard races nothing (run.Jobs: the TUI, mltop tune).
type raceBoard struct {
	mu     sync.Mutex
	best   map[string]float64 // ns, by jobShape
	factor float64            // the largest Race of the specs bound so far
}

func newRaceBoard() *raceBoard { return &raceBoard{best: map[string]float64{}} }

// bound is j with the stopping bound of its shape (Stop.Outpaced): Race
// times the best median of its shape; j as it is when j does not race or
// its shape has no best yet.
func (b *raceBoard) bound(j profiler.Job) profiler.Job {
	if b == nil || j.Options.Race <= 1 {
		return j
	}
	b.mu.Lock()
	best := b.best[jobShape(j)]
	b.factor = max(b.factor, j.Options.Race)
	b.mu.Unlock()
	if best > 0 {
		j.Options.Stop.Outpaced = j.Options.Race * best
	}
	return j
}

// note takes res, the result of j, as its shape's best when it is one
// (SetsRaceBest) and faster than the best so far.
func (b *raceBoard) note(j profiler.Job, res profiler.Result) {
	if b == nil || !SetsRaceBest(res) {
		return
	}
	key := jobShape(j)
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.best[key]; !ok || res.Stats.Median < old {
		b.best[key] = res.Stats.Median
	}
}

// seeding is skipped (which may be nil), which also takes the result
// resumed has of each skipped job as its shape's best where it is one:
// a resumed sweep races its specs against the rows already in the file.
// skipped as it is without resumed.
func (b *raceBoard) seeding(skipped func(profiler.Job), resumed func(profiler.Job) (profiler.Result, bool)) func(profiler.Job) {
	if resumed == nil {
		return skipped
	}
	return func(j profiler.Job) {
		if skipped != nil {
			skipped(j)
		}
		if res, ok := resumed(j); ok {
			b.note(j, res)
		}
	}
}

// raced is the largest Race factor of the specs bound so far (0: none
// raced, or no board).
func (b *raceBoard) raced() float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.factor
}

// SetsRaceBest says whether a result may be the best of its shape that
// --race measures the others against: a verified (ok) row measured to
// the end of its stopping rule (precision, time limit, max samples), not
// an outpaced one, nor a mismatch (a wrong kernel is often a fast one).
func SetsRaceBest(r profiler.Result) bool {
	if r.Status != profiler.StatusOK || r.Stats.Median <= 0 {
		return false
	}
	switch r.StopReason {
	case profiler.StopPrecision, profiler.StopTimeLimit, profiler.StopMaxSamples:
		return true
	}
	return false
}

// RaceNote is the line for the end of a sweep that raced (some spec had
// a Race factor): how many of the specs measured stopped early, outpaced;
// "" when none raced.
func (s Summary) RaceNote() string {
	if s.Race <= 0 {
		return ""
	}
	return fmt.Sprintf("%d of %s stopped early, slower than %gx the best of their shape (--race)",
		s.Outpaced, profiler.Plural(s.Measured, "spec", "specs"), s.Race)
}
