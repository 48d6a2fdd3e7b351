package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// The plan step plans the default spec without a device: a spec that does
// not plan is a [plan] error, not a compile one (nothing was compiled); a
// manifest that plans gets no [plan] finding.
func TestPlanStep(t *testing.T) {
	const dispatch = "{entry: k, grid: [rows], threads: [WG], args: [X, Y, rows, cols]}"
	metalSrc := "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& rows [[buffer(2)]], constant int& cols [[buffer(3)]], uint i [[thread_position_in_grid]]) {}\n"
	for _, c := range []struct {
		name    string
		edit    func(string) string
		metal   bool
		level   Level // of the [plan] findings; -1: none
		want    []string
		exclude string
	}{
		{"within the limits", func(m string) string { return m }, false, -1, nil, ""},
		{"division by zero", func(m string) string {
			return strings.Replace(m, "grid: [rows]", "grid: [rows / 0]", 1)
		}, false, Error, []string{"error   [plan] ", "the default spec does not plan: ", "integer division by zero in grid[0] 'rows / 0'"}, "[compile]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.edit(usertest.Manifest("plan_k"))
			files := map[string]string{"k.cu": usertest.Source}
			if c.metal {
				m = strings.Replace(m, "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
				files = map[string]string{"k.metal": metalSrc}
			}
			files["kernel.yaml"] = m
			if !strings.Contains(m, dispatch[:20]) {
				t.Fatalf("the edit lost the dispatch:\n%s", m)
			}
			rep := Check(usertest.Write(t, files), noTools(t))
			r := rep.Manifests[0]
			text := findingsOf(r)
			if r.Broken() {
				t.Fatalf("broken:\n%s", text)
			}
			var plan []Finding
			for _, f := range r.Findings {
				if f.Step == StepPlan {
					plan = append(plan, f)
				}
			}
			if c.level < 0 {
				if len(plan) > 0 {
					t.Errorf("[plan] findings on a spec within the limits:\n%s", text)
				}
				return
			}
			if len(plan) == 0 {
				t.Fatalf("no [plan] finding:\n%s", text)
			}
			for _, f := range plan {
				if f.Level != c.level {
					t.Errorf("[plan] finding at %s, want %s: %s", f.Level, c.level, f)
				}
			}
			mustContain(t, c.name, text, c.want...)
			if c.exclude != "" && strings.Contains(text, c.exclude) {
				t.Errorf("%s: %q in\n%s", c.name, c.exclude, text)
			}
			if wantCode := map[Level]int{Warning: 0, Error: 1}[c.level]; rep.ExitCode() != wantCode {
				t.Errorf("exit %d, want %d", rep.ExitCode(), wantCode)
			}
		})
	}
}
