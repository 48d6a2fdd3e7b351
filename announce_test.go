package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnnounceAfterInputChecks: a CSV that holds rows and --devices on the
// CPU are refused before the sweep is announced; the count is singular
// for one spec and leaves invalid specs out, naming them.
func TestAnnounceAfterInputChecks(t *testing.T) {
	one := writeFile(t, "one.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n")
	full := filepath.Join(t.TempDir(), "full.csv")
	os.WriteFile(full, []byte("time,backend,kernel\nx,cpu,softmax_bwd\n"), 0o644)
	for _, args := range [][]string{
		{"--config", one, "--backend", "cpu", "--csv", full},
		{"--config", one, "--backend", "cpu", "--devices", "all"},
	} {
		code, _, stderr := runMain(t, args...)
		if code != exitBadInput || strings.Contains(stderr, "to run from") {
			t.Errorf("%q: exit %d, announced before refusing:\n%s", args, code, stderr)
		}
	}
	code, _, stderr := runMain(t, "--config", one, "--backend", "cpu", "--quiet")
	if code != exitOK || !strings.Contains(stderr, "1 spec to run from") || !strings.Contains(stderr, "(1 kernel build);") {
		t.Errorf("one spec: exit %d:\n%s", code, stderr)
	}
	// WM=8 breaks the rule BQ % (8·WM) == 0: counted as invalid, not as work.
	mixed := writeFile(t, "mixed.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: attn_fwd\n    knobs: {BQ: 16, WM: [1, 8]}\n    dims: {B: 1, H: 1, Lq: 32, Lk: 32}\n")
	_, _, stderr = runMain(t, "--config", mixed, "--backend", "cpu", "--quiet")
	if !strings.Contains(stderr, "1 spec to run from") || !strings.Contains(stderr, "and 1 invalid (") {
		t.Errorf("mixed:\n%s", stderr)
	}
}
