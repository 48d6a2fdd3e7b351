package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// A default spec that does not plan is one [plan] error: the reference
// step, which would plan the same spec, does not report it again.
func TestPlanErrorReportedOnce(t *testing.T) {
	m := strings.Replace(usertest.Manifest("plan_once_k"), "args: [X, Y, rows, cols]", `args: [X, Y, rows, "cols * 1000000000000"]`, 1)
	m = strings.Replace(m, "check: none", "check: {python: ref.py}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source, "ref.py": "def reference(inputs, dims):\n    return {}\n"})
	opt := noTools(t)
	opt.Python = "python3"
	r := Check(path, opt).Manifests[0]
	var plan, ref int
	for _, f := range r.Findings {
		switch {
		case f.Level == Error && f.Step == StepPlan:
			plan++
		case f.Level == Error && f.Step == StepReference:
			ref++
		}
	}
	if plan != 1 || ref != 0 {
		t.Errorf("%d plan and %d reference errors, want 1 and 0:\n%s", plan, ref, findingsOf(r))
	}
}
