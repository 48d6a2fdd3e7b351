package run_test

import (
	"testing"

	"github.com/mltop/mltop/profiler/run"
)

func TestSummaryExitCode(t *testing.T) {
	cases := []struct {
		s    run.Summary
		want int
	}{
		{run.Summary{}, 0},
		{run.Summary{Invalid: 1}, 2},
		{run.Summary{Failed: 1, Invalid: 1}, 1},
	}
	for _, c := range cases {
		if got := c.s.ExitCode(); got != c.want {
			t.Errorf("%+v: %d want %d", c.s, got, c.want)
		}
	}
}
