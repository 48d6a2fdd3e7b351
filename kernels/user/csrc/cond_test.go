package csrc

import "testing"

// Conds reads #if groups directive by directive: dead under `#if 0`, after
// the branch of an `#if 1`, and inside a dead group whatever its own
// conditions; live everywhere else.
func TestConds(t *testing.T) {
	var c Conds
	for i, step := range []struct {
		line          string
		dirDead, dead bool
	}{
		{"#if 0", false, true},
		{"#ifdef X", true, true}, // nested in a dead group
		{"#else", true, true},
		{"#endif", true, true},
		{"#else", false, false},
		{"#endif", false, false},
		{"#if 1", false, false},
		{"# elif FOO", false, true},
		{"#else", false, true},
		{"#endif", false, false},
		{"#ifdef X", false, false},
		{"#elif 0", false, true},
		{"#elif false", false, true},
		{"#else", false, false},
		{"#endif", false, false},
		{"#define N 4", false, false},
		{"#endif", false, false}, // a stray #endif changes nothing
	} {
		if got := c.Directive(step.line); got != step.dirDead || c.Dead() != step.dead {
			t.Errorf("step %d %q: directive dead %v, then dead %v; want %v, %v", i, step.line, got, c.Dead(), step.dirDead, step.dead)
		}
	}
}
