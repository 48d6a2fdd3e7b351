package run_test

import (
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

func TestSummaryPlural(t *testing.T) {
	one := run.Summary{Total: 1, ByStatus: map[profiler.Status]int{profiler.StatusOK: 1}}
	if got := one.String(); got != "1 spec: 1 ok" {
		t.Errorf("summary of one spec: %q", got)
	}
	two := run.Summary{Total: 2, ByStatus: map[profiler.Status]int{profiler.StatusOK: 2}}
	if got := two.String(); got != "2 specs: 2 ok" {
		t.Errorf("summary of two specs: %q", got)
	}
}
