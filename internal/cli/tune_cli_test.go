package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/search"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/profiler/tune"
)

// quick keeps the CPU measurements of these tests short.
var quick = []string{"--backend", "cpu", "--time-limit", "0.02", "--min-time", "0.001", "--warmup", "0.001", "--quiet"}

func tuneArgsFor(args ...string) []string { return append(append([]string{"tune"}, args...), quick...) }

func TestTuneWritesRowsTableAndHeaders(t *testing.T) {
	dir := t.TempDir()
	csv, hdr, metal, table := filepath.Join(dir, "t.csv"), filepath.Join(dir, "t.h"), filepath.Join(dir, "t.metal"), filepath.Join(dir, "t.json")
	code, stdout, stderr := runMain(t, tuneArgsFor("softmax_bwd", "--shapes", "rows=8,cols=64;rows=16,cols=128", "--budget", "2", "--strategy", "random",
		"--csv", csv, "--header", hdr, "--metal-header", metal, "--table", table, "--top", "2")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"softmax_bwd f32 | rows=8 cols=64", "softmax_bwd f32 | rows=16 cols=128", "2 measured of 6 configurations", "#1 WG=", "#2 WG=", "tuning table of softmax_bwd"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "the candidates' times are the CPU backend's wall-clock timings") {
		t.Errorf("no caveat for the CPU backend's times:\n%s", stderr)
	}
	rows, err := sink.ReadCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	// Per shape: 2 search measurements, then 2 re-measurements.
	if len(rows) != 8 || rows[0].Search == nil || rows[0].Search.Step != 1 || rows[2].Search == nil || !rows[2].Search.Final {
		t.Errorf("%d rows; first marks %+v, third %+v", len(rows), rows[0].Search, rows[2].Search)
	}
	for _, f := range []string{hdr, metal, table} {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "softmax_bwd") {
			t.Errorf("%s: %v\n%s", f, err, b)
		}
	}
	if b, _ := os.ReadFile(hdr); !strings.Contains(string(b), "softmax_bwd_select_config(int dtype, long long rows, long long cols)") {
		t.Errorf("header:\n%s", b)
	}
}

func TestTuneExhaustiveAndResume(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "t.csv")
	code, _, stderr := runMain(t, tuneArgsFor("softmax_bwd", "--dims", "rows=8,cols=64", "--budget", "2", "--csv", csv)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	table := filepath.Join(filepath.Dir(csv), "table.csv")
	code, stdout, stderr := runMain(t, tuneArgsFor("softmax_bwd", "--dims", "rows=8,cols=64", "--budget", "50", "--resume", csv, "--table", table)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "measuring every one (exhaustive)") || !strings.Contains(stderr, "resumed: 2 measurements") || !strings.Contains(stdout, "4 measured (+2 from --resume) of 6") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	// mltop report renders the table file.
	code, stdout, stderr = runMain(t, "report", table)
	if code != 0 || !strings.Contains(stdout, "tuning table of softmax_bwd") || !strings.Contains(stdout, "rows=8 cols=64  WG=") {
		t.Errorf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Bad input exits 2 with a message that names it; nothing measured is lost.
func TestTuneBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"objective", []string{"softmax_bwd", "--objective", "p99_us"}, `objective "p99_us" is not a column a search can optimise`},
		{"strategy", []string{"softmax_bwd", "--strategy", "annealing"}, `--strategy "annealing": use one of tpe`},
		{"budget", []string{"softmax_bwd", "--budget", "lots"}, "--budget: budget \"lots\""},
		{"all fixed", []string{"softmax_bwd", "--set", "WG=64"}, "nothing to search"},
		{"knob in dims", []string{"softmax_bwd", "--dims", "WG=64"}, "WG is not a dim (dims are rows, cols); knobs to fix go in --set"},
		{"misspelt dim", []string{"softmax_bwd", "--dims", "rws=64"}, "--dims: in the shape rws=64, rws is not a dim (dims are rows, cols); did you mean rows?"},
		{"misspelt dim in shapes", []string{"softmax_bwd", "--shapes", "rows=64,cols=64;rows=8,colls=64"}, "--shapes: in the shape colls=64,rows=8, colls is not a dim"},
		{"empty space", []string{"softmax_bwd", "--dims", "rows=16777216,cols=1048576"}, "no configuration is left"},
		{"json", []string{"softmax_bwd", "--json"}, "--json and --bench are for run and sweeps"},
		{"every spec invalid", []string{"examples/row_sum/kernel.yaml"}, "its only source is CUDA: --backend cuda runs it on an NVIDIA GPU; without one, `mltop check --run examples/row_sum --set …` (a small shape) runs it on the CUDA emulation)"}, // the CPU refusal run and sweep give
		{"table ext", []string{"softmax_bwd", "--table", filepath.Join(dir, "t.txt")}, ".csv or .json"},
	} {
		code, _, stderr := runMain(t, tuneArgsFor(c.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q: want 2 and %q", c.name, code, stderr, c.want)
		}
	}
}

func TestSweepWithSearchBlock(t *testing.T) {
	dir := t.TempDir()
	hdr := filepath.Join(dir, "s.h")
	cfg := writeFile(t, "s.yaml", `backend: cpu
defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001}
search:
  strategy: tpe
  budget: 2
  top: 2
  shapes:
    - {rows: 8, cols: 64}
    - {rows: 16, cols: 64}
  header: `+hdr+`
sweeps:
  - kernel: softmax_bwd
    knobs: {WG: [32, 64, 128]}
    where: ["WG <= cols"]
`)
	code, stdout, stderr := runMain(t, "--config", cfg, "--quiet", "--csv", filepath.Join(dir, "s.csv"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// where: leaves 2 configurations per shape, so budget 2 is exhaustive.
	if !strings.Contains(stdout, "2 measured of 2 configurations") || !strings.Contains(stdout, "rows=16 cols=64") || strings.Contains(stdout, "WG=128") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if b, err := os.ReadFile(hdr); err != nil || strings.Count(string(b), "{ MLTOP_F32,") != 2 {
		t.Errorf("header %v:\n%s", err, b)
	}
}

func TestSearchErrorExitCodes(t *testing.T) {
	o := &options{csv: "t.csv"}
	for _, c := range []struct {
		err  error
		code int
		want string
	}{
		{fmt.Errorf("x: %w", tune.ErrNoValid), exitBadInput, "the rows measured are in t.csv"},
		{fmt.Errorf("x: %w", search.ErrEmpty), exitBadInput, "no configuration is left"},
		{context.Canceled, exitFailed, "--resume t.csv"},
		{errors.New("disk full"), exitFailed, "disk full"},
	} {
		var ee *exitError
		if err := searchError(c.err, o); !errors.As(err, &ee) || ee.code != c.code || !strings.Contains(ee.msg, c.want) {
			t.Errorf("searchError(%v) = %v: want exit %d and %q", c.err, err, c.code, c.want)
		}
	}
	// without --csv nothing was kept: said, with what keeps it
	var ee *exitError
	if err := searchError(context.Canceled, &options{}); !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(ee.msg, "nothing measured was kept; add --csv FILE") {
		t.Errorf("ctrl-C without --csv: %v", err)
	}
}

// A sweep's search: each shape is one search whose knobs are the values
// the stream makes for it; a combination the sweep leaves out (here by
// where:) is refused before measuring; the command line's settings apply.
func TestSearchConfigsFromStream(t *testing.T) {
	st, err := sweep.ParseStream("s.yaml", []byte(`search: {budget: 2}
sweeps:
  - kernel: rmsnorm_bwd
    dims: {rows: [64, 128], D: [256]}
    knobs: {WG: [64, 128], VEC: [2, 4], RB: [1]}
    where: ["WG * VEC <= 256"]
`), profiler.DefaultOptions(), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := searchConfigs(context.Background(), st, func(o *profiler.Options) profiler.Options {
		out := *o
		out.Stop.MaxTime = 7
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 2 || cfgs[0].Base.Dims["rows"] != 64 || cfgs[1].Base.Dims["rows"] != 128 {
		t.Fatalf("%d searches: %+v", len(cfgs), cfgs)
	}
	c := cfgs[0]
	want := []search.Knob{{Name: "VEC", Values: []int{2, 4}}, {Name: "WG", Values: []int{64, 128}}}
	if !reflect.DeepEqual(c.Knobs, want) || c.Options.Stop.MaxTime != 7 || c.Budget.Evals != 2 {
		t.Errorf("knobs %+v, max time %g, budget %+v", c.Knobs, c.Options.Stop.MaxTime, c.Budget)
	}
	at := func(wg, vec int) profiler.Spec {
		s := c.Base.Clone()
		s.Knobs["WG"], s.Knobs["VEC"] = wg, vec
		return s
	}
	if err := c.Allow(at(64, 4)); err != nil {
		t.Errorf("WG=64 VEC=4 is in the sweep: %v", err)
	}
	if err := c.Allow(at(128, 4)); !errors.Is(err, errNotInSweep) {
		t.Errorf("WG=128 VEC=4 is filtered out by where:, Allow said %v", err)
	}
}

// --dry-run cannot count a search: it says so, exit 2.
func TestSweepSearchRefusesDryRun(t *testing.T) {
	cfg := writeFile(t, "s.yaml", "backend: cpu\nsearch: {budget: 2}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n")
	code, _, stderr := runMain(t, "--config", cfg, "--dry-run")
	if code != exitBadInput || !strings.Contains(stderr, "--dry-run does not apply") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// Like TestTimeoutWithoutWorkerWarns for searches: a watchdog timeout
// asked of `mltop tune` or a sweep's search: block whose specs run in this
// process is said to have no effect, naming where it was given; in a
// worker, or without a timeout, nothing is said.
func TestSearchTimeoutWithoutWorkerWarns(t *testing.T) {
	const search = "backend: cpu\ndefaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001%s}\nsearch: {budget: 2, shapes: [{rows: 8, cols: 64}]}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n"
	plain := writeFile(t, "s.yaml", fmt.Sprintf(search, ""))
	inFile := writeFile(t, "st.yaml", fmt.Sprintf(search, ", timeout: 0.3"))
	// in a worker the watchdog works: a long one, which a busy machine's
	// worker start-up cannot reach
	inFileLong := writeFile(t, "sl.yaml", fmt.Sprintf(search, ", timeout: 60"))
	tuneArgs := tuneArgsFor("softmax_bwd", "--dims", "rows=8,cols=64", "--budget", "2")
	const warning = "has no effect: the cpu backend runs specs in this process, where no watchdog can stop one; add --isolate on"
	for _, tc := range []struct {
		name string
		args []string
		want string // "": no warning
	}{
		{"tune", slices.Concat(tuneArgs, []string{"--timeout", "0.3"}), "--timeout 0.3 " + warning},
		{"tune in a worker", slices.Concat(tuneArgs, []string{"--timeout", "60", "--isolate", "on"}), ""},
		{"tune without a timeout", tuneArgs, ""},
		{"search: timeout in the file", []string{"--config", inFile, "--quiet"}, "timeout: 0.3 in " + inFile + " " + warning},
		{"search: --timeout", []string{"--config", plain, "--quiet", "--timeout", "0.3"}, "--timeout 0.3 " + warning},
		{"search in a worker", []string{"--config", inFileLong, "--quiet", "--isolate", "on"}, ""},
		{"search without a timeout", []string{"--config", plain, "--quiet"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			if tc.want == "" && strings.Contains(stderr, "no watchdog") {
				t.Errorf("a warning where the watchdog works or was not asked for:\n%s", stderr)
			}
			if tc.want != "" && strings.Count(stderr, tc.want) != 1 {
				t.Errorf("stderr does not say once %q:\n%s", tc.want, stderr)
			}
		})
	}
}
