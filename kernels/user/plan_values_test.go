package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A plan error names the values its expression read ("for rows=0"), and
// says nothing of values when the expression is a literal: no dangling
// "for :" (a `shape: [0]` once read "is 0 for : every extent…").
func TestPlanErrorsNameValuesOnlyWhenRead(t *testing.T) {
	for _, c := range []struct {
		name, old, new string
		want           []string
	}{
		{"literal extent", "shape: [rows, cols]}", "shape: [0, cols]}",
			[]string{"buffer X: shape", "'0'", "is 0: every extent must be positive"}},
		{"extent of a dim", "shape: [rows, cols]}", "shape: [\"rows - 8\", cols]}",
			[]string{"buffer X: shape", "is 0 for rows=8: every extent must be positive"}},
		{"literal grid", "grid: [rows]", "grid: [0]",
			[]string{"dispatch k:", "'0'", "is 0: a launch needs at least 1"}},
		{"terms of zero", "out: true, tol: {atol: 1e-3}}", "out: true, tol: {atol: 1e-3}, terms: \"cols - 16\"}",
			[]string{"buffer Y: terms 'cols - 16' is 0 for cols=16", "the reduction length must be ≥ 1", "e.g. terms: cols"}},
		{"literal dynamic_tgm", "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], dynamic_tgm: \"-4\"}",
			[]string{"dynamic_tgm '-4'", "is -4 bytes: it must be 0 or more"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			y := strings.Replace(goodYAML, c.old, c.new, 1)
			if y == goodYAML {
				t.Fatalf("test setup: %q not in the manifest", c.old)
			}
			f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Plan(profiler.Spec{Kernel: f.Name()}.WithDefaults(f.Schema()), cudaDev)
			errorSays(t, err, c.want)
			if strings.Contains(err.Error(), " for :") {
				t.Errorf("error %q has an empty value list", err)
			}
		})
	}
}

// errorSays fails t unless err is an error whose text says every one of
// want.
func errorSays(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\nlacks %q", err, w)
		}
	}
}
