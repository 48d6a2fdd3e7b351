package search

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
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
	bad := func() (Budget, error) {
		return Budget{}, fmt.Errorf("budget %q: use a number of evaluations (60), a share of the configurations (5%% or 0.05) or a time (90s, 10m)", s)
	}
	switch {
	case s == "":
		return bad()
	case strings.HasSuffix(s, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || !(f > 0 && f <= 100) {
			return bad()
		}
		return Budget{Fraction: f / 100}, nil
	case strings.ContainsAny(s[len(s)-1:], "smh"):
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return bad()
		}
		return Budget{Time: d}, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return bad()
		}
		return Budget{Evals: n}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f < 1) {
		return bad()
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
		return strconv.Itoa(b.Evals) + " evaluations"
	case b.Fraction > 0:
		return strconv.FormatFloat(b.Fraction*100, 'g', 4, 64) + "% of the configurations"
	case b.Time > 0:
		return b.Time.String()
	}
	return "none"
}
