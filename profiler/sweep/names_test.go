package sweep

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// TestUnknownNamesAllReported: every unknown knob, dim and flag name of an
// entry is named in one error, in file order (not in the order they are
// checked: dims, flags, knobs), each at its file:line:col (of the value, as every error of a
// field) with its hint.
func TestUnknownNamesAllReported(t *testing.T) {
	checkNameErrors(t, []nameErrorCase{
		{"a knob, then a dim (the user's report)",
			"sweeps:\n  - kernel: test_scale\n    knobs: {WGG: [64]}\n    dims: {N: 64, M: 64}\n",
			[]string{
				`s.yaml:3:18: sweeps[0].knobs.WGG: test_scale has no knob "WGG": did you mean WG? knobs are WG`,
				`s.yaml:4:22: sweeps[0].dims.M: test_scale has no dim "M": dims are N`,
			}},
		{"one line, by column",
			"sweeps:\n  - {kernel: test_scale, flags: {brokn: true}, dims: {WG: 8}, knobs: {N: 2}}\n",
			[]string{
				`s.yaml:2:41: sweeps[0].flags.brokn: test_scale has no flag "brokn": did you mean broken? flags are broken, drift`,
				`s.yaml:2:59: sweeps[0].dims.WG: test_scale has no dim "WG": WG is a knob (put it under knobs:); dims are N`,
				`s.yaml:2:74: sweeps[0].knobs.N: test_scale has no knob "N": N is a dim (put it under dims:); knobs are WG`,
			}},
		{"block style, a comma key naming two",
			"sweeps:\n  - kernel: test_scale\n    flags:\n      drift: true\n      brocken: false\n    dims:\n      \"Q,R\": 4\n    knobs:\n      wg: 32\n",
			[]string{
				`s.yaml:5:16: sweeps[0].flags.brocken: test_scale has no flag "brocken": did you mean broken? flags are broken, drift`,
				`s.yaml:7:14: sweeps[0].dims.Q,R: test_scale has no dim "Q": dims are N`,
				`s.yaml:7:14: sweeps[0].dims.Q,R: test_scale has no dim "R": dims are N`,
				`s.yaml:9:11: sweeps[0].knobs.wg: test_scale has no knob "wg": did you mean WG? knobs are WG`,
			}},
		{"one unknown name is one line",
			"sweeps:\n  - kernel: test_scale\n    knobs: {WG: 32, WGX: 64}\n",
			[]string{`s.yaml:3:26: sweeps[0].knobs.WGX: test_scale has no knob "WGX": did you mean WG? knobs are WG`}},
	})
}

type nameErrorCase struct {
	name, src string
	want      []string // the error's lines
}

// checkNameErrors parses each case's sweep and wants its error, whole, and
// the lead error's own fields to be the first line's, for what shows one
// place (an editor's jump, the session's prompt).
func checkNameErrors(t *testing.T, cases []nameErrorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(c.src), profiler.DefaultOptions())
			var ie *profiler.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err %v (%T), want an InputError", err, err)
			}
			if got := err.Error(); got != strings.Join(c.want, "\n") {
				t.Errorf("error:\n%s\nwant:\n%s", got, strings.Join(c.want, "\n"))
			}
			if lead := fmt.Sprintf("%s:%d:%d: %s: %s", ie.File, ie.Line, ie.Col, ie.Field, ie.Msg); lead != c.want[0] {
				t.Errorf("the lead error's fields say %q, want %q", lead, c.want[0])
			}
		})
	}
}

// TestUnknownNamesOfEveryEntry: the unknown names of every `sweeps:`
// entry are named in one error, in file order; a later entry's other
// error waits until the names before it are fixed.
func TestUnknownNamesOfEveryEntry(t *testing.T) {
	checkNameErrors(t, []nameErrorCase{
		{"two entries",
			"sweeps:\n  - kernel: test_scale\n    knobs: {WGG: [64]}\n  - kernel: test_scale\n    dims: {NN: 64}\n    flags: {drfit: true}\n",
			[]string{
				`s.yaml:3:18: sweeps[0].knobs.WGG: test_scale has no knob "WGG": did you mean WG? knobs are WG`,
				`s.yaml:5:16: sweeps[1].dims.NN: test_scale has no dim "NN": dims are N`,
				`s.yaml:6:20: sweeps[1].flags.drfit: test_scale has no flag "drfit": did you mean drift? flags are broken, drift`,
			}},
		{"a later entry's unknown kernel waits",
			"sweeps:\n  - kernel: test_scale\n    knobs: {WGG: 64}\n  - kernel: test_scal\n",
			[]string{`s.yaml:3:18: sweeps[0].knobs.WGG: test_scale has no knob "WGG": did you mean WG? knobs are WG`}},
	})
}
