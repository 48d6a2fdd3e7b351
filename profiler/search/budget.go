package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Budget bounds a search: a number of evaluations, a fraction of the space,
// or a time. Exactly one is set.
type Budget struct {
	Evals    int
	Fraction float64
	Time     time.Duration
}

// ParseBudget reads "60" (evaluations), "5%" or "0.05" (a fraction of the
// space) and "90s", "10m", "1h" (time spent searching).
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (Budget, error) {
		if why != "" {
			return Budget{}, fmt.Errorf("budget %q%s", s, why)
		}
		return Budget{}, fmt.Errorf("budget %q: use a number of evaluations (60), a share of the configurations (5%% or 0.05) or a time (90s, 10m)", s)
	}
	switch {
	case s == "":
		return bad("")
	case strings.HasSuffix(s, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		switch {
		case err != nil:
			return bad("")
		case !(f > 0 && f <= 100):
			return bad(" is not a share of the configurations: give more than 0% and at most 100% (100% measures every one)")
		}
		return Budget{Fraction: f / 100}, nil
	case strings.ContainsAny(s[len(s)-1:], "smh"):
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return bad("")
		case d <= 0:
			return bad(" leaves no time to search: give a time such as 90s or 10m")
		}
		return Budget{Time: d}, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return bad(" allows no evaluation: give at least 1")
		}
		return Budget{Evals: n}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil:
		return bad("")
	case !(f > 0 && f < 1):
		return bad(" is not a share of the configurations (from 0 to 1, such as 0.05) nor a whole number of evaluations (such as 60)")
	}
	return Budget{Fraction: f}, nil
}

// EvalsFor is the number of evaluations the budget allows in a space of
// size configurations; a time budget allows up to all of them (the driver
// stops on the clock).
func (b Budget) EvalsFor(size int) int {
	switch {
	case b.Evals > 0:
		return b.Evals
	case b.Fraction > 0:
		return max(1, int(math.Ceil(b.Fraction*float64(size))))
	}
	return size
}

// String is the budget as a user wrote it.
func (b Budget) String() string {
	switch {
	case b.Evals > 0:
		return profiler.Plural(b.Evals, "evaluation", "evaluations")
	case b.Fraction > 0:
		return strconv.FormatFloat(b.Fraction*100, 'g', 4, 64) + "% of the configurations"
	case b.Time > 0:
		return b.Time.String()
	}
	return "none"
}
