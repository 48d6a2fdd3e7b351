package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A doc states a flag's default in four shapes: "`--time-limit` (1 s by
// default)", "`--strategy tpe` by default", a row of docs/commands.md's
// "| flag | default | meaning |" table ("| `--time-limit S` | `1` | …"),
// and a row of another flag table that ends its meaning with "(default 3)"
// or "(default `sm_90`)".
var (
	defaultInProse   = regexp.MustCompile("`--([a-z][a-z-]*)` \\(([^ )]+)(?: [a-zµ]+)? by default\\)")
	defaultInCode    = regexp.MustCompile("`--([a-z][a-z-]*) ([^` ]+)` by default")
	defaultInColumn  = regexp.MustCompile("^\\| `--([a-z][a-z-]*)[^`]*` \\| `([^`]*)` \\|")
	defaultInMeaning = regexp.MustCompile("^\\| `--([a-z][a-z-]*)[^`]*` \\|.*\\(default `?([^`):, ]+)`?\\) \\|$")
)

// defaultClaims are the (flag, default) pairs a doc states.
func defaultClaims(doc string) [][2]string {
	var out [][2]string
	for _, re := range []*regexp.Regexp{defaultInProse, defaultInCode} {
		for _, m := range re.FindAllStringSubmatch(doc, -1) {
			out = append(out, [2]string{m[1], m[2]})
		}
	}
	defaultColumn := false // in a table whose second column is the default
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "|") {
			defaultColumn = false
			continue
		}
		if strings.HasPrefix(l, "| flag | default |") {
			defaultColumn = true
		}
		re := defaultInMeaning
		if defaultColumn {
			re = defaultInColumn
		}
		if m := re.FindStringSubmatch(l); m != nil {
			out = append(out, [2]string{m[1], m[2]})
		}
	}
	return out
}

// wrongDefaults: the claims whose value is not the default of the flag of
// that name in some command that takes it (flags unknown to every command
// are TestDocsNameWhatExists' business).
func wrongDefaults(doc string) []string {
	var bad []string
	for _, c := range defaultClaims(doc) {
		var defaults []string
		for _, cmd := range commandNames {
			if fs := flagsOf(cmd); fs != nil {
				if f := fs.Lookup(c[0]); f != nil && !slices.Contains(defaults, f.DefValue) {
					defaults = append(defaults, f.DefValue)
				}
			}
		}
		if len(defaults) == 0 {
			continue
		}
		if !slices.Contains(defaults, c[1]) {
			bad = append(bad, "--"+c[0]+" defaults to "+strings.Join(defaults, " or ")+", not "+c[1])
		}
	}
	return bad
}

// TestDocsDefaultsAreTheFlags: a default the docs state for a flag is the
// flag's own, so a changed default (the time limit went from 2 s to 1 s)
// cannot leave a page behind.
func TestDocsDefaultsAreTheFlags(t *testing.T) {
	n := 0
	for p, d := range docFiles(t) {
		n += len(defaultClaims(d))
		for _, bad := range wrongDefaults(d) {
			t.Errorf("%s: %s", p, bad)
		}
	}
	if n < 10 {
		t.Errorf("found only %d stated defaults: are the patterns broken?", n)
	}
}

// The default check catches a stale default in each of its shapes.
func TestDocsDefaultCheckCatches(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want int
	}{
		{"samples until `--time-limit` (1 s by default) runs out", 0},
		{"samples until `--time-limit` (2 s by default) runs out", 1},
		{"(`--strategy tpe` by default; evolution)", 0},
		{"(`--strategy random` by default; evolution)", 1},
		{"| flag | default | meaning |\n| --- | --- | --- |\n| `--time-limit S` | `1` | stop sampling |", 0},
		{"| flag | default | meaning |\n| --- | --- | --- |\n| `--time-limit S` | `2` | stop sampling |", 1},
		{"| flag | default | meaning |\n| --- | --- | --- |\n| `--noise F` | `0.05` | stop when |", 1},
		{"| flag | command | meaning |\n| --- | --- | --- |\n| `--noise F` | `0.05` | stop when |", 0}, // a command, not a default
		{"| `--top N` | `tune` | contenders re-measured (default 3) |", 0},
		{"| `--top N` | `tune` | contenders re-measured (default 5) |", 1},
		{"| `--arch sm_XY` | `check` | NVRTC compiles for (default `sm_90`) |", 0},
		{"| `--arch sm_XY` | `check` | NVRTC compiles for (default `sm_80`) |", 1},
		{"| `--entry FN` | `new` | the kernels (default: the file's only one) |", 0},
		{"`--frobnicate` (3 by default)", 0},
	} {
		if got := wrongDefaults(c.doc); len(got) != c.want {
			t.Errorf("wrongDefaults(%q) = %q, want %d", c.doc, got, c.want)
		}
	}
}
