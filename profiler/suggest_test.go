package profiler

import "testing"

func TestNearest(t *testing.T) {
	kernels := []string{"attn_bwd", "attn_fwd", "softmax_bwd", "transpose"}
	knobs := []string{"BQ", "BK", "WM", "WN", "B", "H", "Hkv", "D", "causal"}
	cases := []struct {
		name  string
		cands []string
		want  string
	}{
		{"atn_fwd", kernels, "attn_fwd"},        // a letter dropped
		{"attn_fwdd", kernels, "attn_fwd"},      // a letter added
		{"softmax_bdw", kernels, "softmax_bwd"}, // neighbours swapped
		{"tarnspose", kernels, "transpose"},
		{"flash", kernels, ""}, // nothing close
		{"bq", knobs, "BQ"},    // case only, though 2 edits away
		{"BQQ", knobs, "BQ"},   // short: one edit
		{"casual", knobs, "causal"},
		{"XY", knobs, ""}, // BQ, WM… are 2 edits away: not a suggestion for a short name
		{"Z", knobs, ""},  // one-letter candidates are never suggested
		{"BX", knobs, ""}, // BQ and BK are equally close: neither
		{"Hkvv", knobs, "Hkv"},
	}
	for _, c := range cases {
		if got := Nearest(c.name, c.cands); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := DidYouMean("atn_fwd", kernels); got != "did you mean attn_fwd? " {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("flash", kernels); got != "" {
		t.Errorf("DidYouMean(flash) = %q, want empty", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"µs", "us", 1}} {
		if got := EditDistance(c.a, c.b); got != c.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
