package run

import (
	"regexp"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestWorkerPhaseDescribe(t *testing.T) {
	cases := []struct {
		name  string
		steps []profiler.Progress
		want  string // a regexp
	}{
		{"nothing said", nil, `^$`},
		{"compile", []profiler.Progress{{Phase: "plan"}, {Phase: "compile"}}, `^, the last \d+(\.\d)?m?s in its compile phase \(compiling and loading the kernel\)$`},
		{"reference", []profiler.Progress{{Phase: "verify"}}, `in its verify phase \(.*the reference \(a ref\.py included\)`},
		{"sampling counts samples", []profiler.Progress{{Phase: "measure", Samples: 3}, {Phase: "measure", Samples: 41}}, `in its measure phase \(sampling: 41 samples taken\)$`},
		{"unknown phase", []profiler.Progress{{Phase: "settle"}}, `in its settle phase$`},
	}
	for _, c := range cases {
		var w workerPhase
		for _, p := range c.steps {
			w.update(p)
		}
		if got := w.describe(); !regexp.MustCompile(c.want).MatchString(got) {
			t.Errorf("%s: %q, want /%s/", c.name, got, c.want)
		}
	}
}
