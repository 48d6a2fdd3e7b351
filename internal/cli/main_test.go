package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// TestMain lets the test binary act as `mltop worker`, so the isolation
// tests run the real worker protocol with the test-only family below.
// The tests name the repository's files (configs/, examples/, README.md)
// from its root, where they ran before this package moved out of main; a
// worker started by a test starts there already.
func TestMain(m *testing.M) {
	if _, err := os.Stat("go.mod"); err != nil {
		if err := os.Chdir("../.."); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		holdWorkerStart(os.Getenv(holdWorkerStartEnv))
	}
	if os.Getenv(runMainEnv) == "1" { // runIsolated: mltop in a process of its own
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if d := os.Getenv("MLTOP_TEST_DEAD_DEVICE"); d != "" && d == os.Getenv(deviceOrdinalEnv) {
			fmt.Fprintln(os.Stderr, "test: no such device")
			os.Exit(1)
		}
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// holdWorkerStartEnv names a file: every worker but the first writes its
// pid there and never says hello, as a GPU worker whose start (cuInit,
// calibration) takes long.
const holdWorkerStartEnv = "MLTOP_TEST_HOLD_WORKER_START"

// holdWorkerStart holds this worker's start for ever, by
// holdWorkerStartEnv's file pidFile, unless it is the first to start.
func holdWorkerStart(pidFile string) {
	if pidFile == "" {
		return
	}
	f, err := os.OpenFile(pidFile+".starts", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(f, "start")
	f.Close()
	if b, _ := os.ReadFile(pidFile + ".starts"); strings.Count(string(b), "start") < 2 {
		return
	}
	os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	time.Sleep(time.Hour) // killed long before
}

// faultFamily is test-only: out = x, except that MODE makes its CPU kernel
// panic (1), hang (2) or kill its process (3).
type faultFamily struct{}

func (faultFamily) Name() string { return "test_fault" }
func (faultFamily) Doc() string  { return "test-only: copies x, or panics, hangs or exits" }
func (faultFamily) Schema() profiler.Schema {
	return profiler.Schema{
		Knobs:  []profiler.Param{{Name: "MODE", Values: []int{0, 1, 2, 3}, Doc: "0 ok, 1 panic, 2 hang, 3 exit"}},
		Dims:   []profiler.Param{{Name: "N", Min: 1, Max: 1 << 20, Default: 64}},
		DTypes: []profiler.DType{profiler.F32},
	}
}
func (faultFamily) Validate(profiler.Spec, profiler.DeviceInfo) error { return nil }
func (faultFamily) Plan(s profiler.Spec, _ profiler.DeviceInfo) (*profiler.Plan, error) {
	n := s.Dims["N"]
	return &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "x", Role: profiler.In, Type: profiler.F32, Elems: int64(n), Init: profiler.InitNormal},
			{Name: "out", Role: profiler.Out, Type: profiler.F32, Elems: int64(n), Init: profiler.InitPoison},
		},
		Dispatches: []profiler.Dispatch{{Name: "fault", Program: profiler.Program{Source: "test_fault", Entry: "test_fault"},
			Grid: [3]int{1, 1, 1}, Group: [3]int{32, 1, 1}, Args: []string{"x", "out"},
			Scalars: []profiler.Scalar{profiler.I32Param("n", n), profiler.I32Param("mode", s.Knobs["MODE"])}}},
		FLOPs: float64(n), Bytes: float64(8 * n),
	}, nil
}
func (faultFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	c := profiler.Check{Buffer: "out"}
	for i, v := range in["x"] {
		c.Index = append(c.Index, i)
		c.Want = append(c.Want, float64(v))
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(c.Index), RowsTotal: len(c.Index), Rows: "all"}, nil
}
func (faultFamily) Tolerance(profiler.DType) profiler.Tolerance { return profiler.Tolerance{} }

func faultKernel(g *host.Group) {
	switch g.Int("mode") {
	case 1:
		panic("test_fault: deliberate panic in the kernel")
	case 2:
		time.Sleep(time.Hour)
	case 3:
		fmt.Fprintln(os.Stderr, "test_fault: device lost, exiting")
		os.Exit(3)
	}
	brokenDeviceHook()
	n := g.Int("n")
	vals := make([]float32, n)
	g.Arg(0, profiler.F32).Load(0, vals)
	g.Arg(1, profiler.F32).Store(0, vals)
}

func init() {
	profiler.Register(faultFamily{})
	host.RegisterKernel("test_fault", faultKernel)
}

const runMainEnv = "MLTOP_TEST_RUN_MAIN"

// runIsolated is runMain in a process of its own (the test binary acting
// as mltop): a user kernel a command registers does not stay registered
// for the other tests.
func runIsolated(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), o.String(), e.String()
}

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

// newTestSession is the session of one Main call, for tests that call a
// command's parts directly.
func newTestSession(stdout, stderr io.Writer) *session {
	return &session{stdout: stdout, stderr: stderr, given: map[string]bool{}, kernels: &manifestList{}}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

const fastDefaults = "defaults: {time_limit: 0.3, min_time: 0.001, warmup: 0.001, hot: true}\n"

func TestWorkerIsolation(t *testing.T) {
	sweep := writeFile(t, "faults.yaml", fastDefaults+`sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
  - kernel: test_fault
    knobs: {MODE: 1}
  - kernel: test_fault
    knobs: {MODE: 2}
    options: {timeout: 2}
  - kernel: test_fault
    knobs: {MODE: 3}
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: 32}
`)
	out := filepath.Join(t.TempDir(), "faults.csv")
	code, stdout, stderr := runMain(t, "--config", sweep, "--backend", "cpu", "--isolate", "on", "--csv", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rows := readCSV(t, out)
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	want := []struct{ status, words string }{
		{"ok", ""},
		{"crashed", "deliberate panic in the kernel"},
		{"timeout", "no result after 2s (watchdog)"},
		{"crashed", "exit status 3; last words: test_fault: device lost, exiting"},
		{"ok", ""},
	}
	for i, w := range want {
		if rows[i]["status"] != w.status || !strings.Contains(rows[i]["error"], w.words) {
			t.Errorf("row %d: %s %q, want %s with %q", i, rows[i]["status"], rows[i]["error"], w.status, w.words)
		}
	}
	// The watchdog's own kill is not blamed on the out-of-memory killer,
	// and the row says what to change.
	// It also says where the worker was: the hang is in the kernel's first
	// run, the verify phase.
	if e := rows[2]["error"]; strings.Contains(e, "out-of-memory") || !strings.Contains(e, "killed by mltop") || !strings.Contains(e, "raise --timeout") || !strings.Contains(e, "in its verify phase (") {
		t.Errorf("timeout row: %q", e)
	}
	if !strings.Contains(stderr, "5 specs: 2 ok, 1 crashed") && !strings.Contains(stderr, "2 crashed, 1 timeout") {
		t.Errorf("summary: %s", stderr)
	}
}

func TestSweepCSVAndResume(t *testing.T) {
	sweep := writeFile(t, "s.yaml", fastDefaults+`backend: cpu
sweeps:
  - kernel: softmax_bwd
    dtypes: [f32, bf16]
    knobs: {WG: [32, 64]}
    dims: {rows: 8, cols: 100}
  - kernel: attn_fwd
    dtypes: [f16]
    knobs: {BQ: [16], BK: 16, WM: [1, 4], WN: 1}
    dims: {H: 2, Hkv: 1, Lq: 40, Lk: 40, D: 64}
    flags: {causal: [false, true]}
`)
	out := filepath.Join(t.TempDir(), "s.csv")
	code, stdout, stderr := runMain(t, "--config", sweep, "--csv", out)
	// WM=4 needs BQ a multiple of 32: those two specs are invalid rows → exit 2
	if code != 2 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	rows := readCSV(t, out)
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	statuses := map[string]int{}
	for _, r := range rows {
		statuses[r["status"]]++
		if r["backend"] != "cpu" || r["timer"] == "" && r["status"] == "ok" {
			t.Errorf("row %v", r)
		}
	}
	if statuses["ok"] != 6 || statuses["invalid"] != 2 {
		t.Errorf("statuses %v\n%s", statuses, stdout)
	}
	if !strings.Contains(stdout, "median ") || !strings.Contains(stdout, "softmax_bwd f32 WG=32 | rows=8 cols=100") {
		t.Errorf("table:\n%s", stdout)
	}
	// --resume skips everything already written and appends nothing new
	code, _, stderr = runMain(t, "--config", sweep, "--resume", out)
	if code != 0 || !strings.Contains(stderr, "8 skipped") {
		t.Errorf("resume: exit %d\n%s", code, stderr)
	}
	// The banner says there is nothing to do, not "0 specs … 0 s to 0 s".
	if !strings.Contains(stderr, "nothing to run from "+sweep+": all its 8 specs are already in the --resume file") || strings.Contains(stderr, "0 specs to run") {
		t.Errorf("resume banner:\n%s", stderr)
	}
	if n := len(readCSV(t, out)); n != 8 {
		t.Errorf("resume changed the file: %d rows", n)
	}
}

func TestRunCommand(t *testing.T) {
	csvPath := filepath.Join(t.TempDir(), "one.csv")
	code, stdout, stderr := runMain(t, "run", "attn_fwd", "--set", "BQ=32,BK=16,D=64,Lq=64,Lk=64,H=2,Hkv=2", "--dtype", "bf16", "--hot", "--time-limit", "0.3", "--json", "--csv", csvPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var r profiler.Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Status != profiler.StatusOK || r.Spec.Knobs["WM"] != 4 || r.Spec.Dims["B"] != 1 || r.Spec.DType != profiler.BF16 || r.Timer != "wall-clock" {
		t.Errorf("result %+v", r)
	}
	if rows := readCSV(t, csvPath); len(rows) != 1 || rows[0]["BQ"] != "32" || rows[0]["tgm_bytes"] != "9216" {
		t.Errorf("csv %v", rows)
	}
	code, stdout, _ = runMain(t, "run", "softmax_bwd", "--set", "rows=4,cols=64", "--hot", "--time-limit", "0.2")
	if code != 0 || !strings.Contains(stdout, "correctness vs float64 reference: PASS") || !strings.Contains(stdout, "red_smem") {
		t.Errorf("block:\n%s", stdout)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	goodSweep := writeFile(t, "good.yaml", fastDefaults+"sweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 2, cols: 8}\n")
	otherCSV := writeFile(t, "other.csv", "time,backend,kernel\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown backend", []string{"--backend", "rocm", "--config", goodSweep}, `unknown backend "rocm"`},
		{"bad isolate", []string{"--isolate", "maybe", "--config", goodSweep}, `--isolate="maybe"`},
		{"bad noise", []string{"--noise", "2", "--config", goodSweep}, "--noise=2"},
		{"unknown flag", []string{"--frob"}, ""},
		{"missing config", []string{"--config", filepath.Join(dir, "none.yaml")}, "none.yaml: cannot read the sweep file: no such file or directory: check the path"},
		{"malformed yaml", []string{"--config", writeFile(t, "bad.yaml", "sweeps: [\n")}, "bad.yaml:1:"},
		{"unknown key", []string{"--config", writeFile(t, "key.yaml", "sweeps:\n  - kernel: attn_fwd\n    knbos: {BQ: 32}\n")}, `key.yaml:3:5: unknown field "knbos"`},
		{"unknown kernel in yaml", []string{"--config", writeFile(t, "k.yaml", "sweeps:\n  - kernel: flash\n")}, `k.yaml:2:13: sweeps[0].kernel: unknown kernel "flash"`},
		{"unwritable csv", []string{"--config", goodSweep, "--csv", filepath.Join(dir, "no/such/dir.csv")}, "cannot write the CSV file: the folder " + filepath.Join(dir, "no/such") + " does not exist: create it"},
		{"resume a foreign csv", []string{"--config", goodSweep, "--resume", otherCSV}, "other.csv:1: not an mltop CSV (the header lacks device, timer, dtype"},
		{"csv would replace rows", []string{"--config", goodSweep, "--csv", otherCSV}, "exists and is not empty"},
		{"csv is a directory", []string{"--config", goodSweep, "--csv", dir}, "is a directory"},
		{"report foreign csv", []string{"report", otherCSV}, "not an mltop CSV: the header lacks the columns device, timer, dtype, n,"},
		{"run unknown kernel", []string{"run", "flash"}, `unknown kernel "flash"`},
		{"new missing source", []string{"new", "k", "--from", filepath.Join(dir, "none.cu"), "--entry", "k"}, "none.cu: no such file or directory: give the .cu or .metal file that holds the kernel"},
		{"calibrate with a backend name", []string{"calibrate", "cuda"}, `calibrate takes no arguments, got ["cuda"]: to pick the backend write mltop calibrate --backend cuda`},
		{"selftest with an argument", []string{"selftest", "now"}, `selftest takes no arguments, got ["now"]`},
		{"list with an unknown name", []string{"list", "atn_fwd"}, `list: unknown kernel "atn_fwd": did you mean attn_fwd?`},
		{"list with a path", []string{"list", "./scale"}, `list takes kernel names, got the path "./scale": to add a user kernel write mltop list --kernel ./scale`},
		{"run kernel typo", []string{"run", "atn_fwd"}, `unknown kernel "atn_fwd": did you mean attn_fwd? known kernels are`},
		{"run knob typo", []string{"run", "attn_fwd", "--set", "bq=32"}, `has no knob, dim or flag "bq": did you mean BQ?`},
		{"run flag typo", []string{"run", "attn_fwd", "--set", "casual=1"}, `has no knob, dim or flag "casual": did you mean causal?`},
		{"yaml kernel typo", []string{"--config", writeFile(t, "kt.yaml", "sweeps:\n  - kernel: softmax_bwdd\n")}, `kt.yaml:2:13: sweeps[0].kernel: unknown kernel "softmax_bwdd": did you mean softmax_bwd?`},
		{"run no kernel", []string{"run"}, "run takes one kernel name"},
		{"run set split by a space", []string{"run", "softmax_bwd", "--set", "rows=64", "cols=128"}, "cols=128 is a setting: give settings to --set"},
		{"run set split by a space, joined", []string{"run", "softmax_bwd", "--set", "rows=64", "cols=128"}, "(--set rows=64,cols=128)"},
		{"run setting without --set", []string{"run", "softmax_bwd", "rows=64"}, "(--set rows=64)"},
		{"watch set split by a space", []string{"watch", "./k", "--set", "WG=128", "rows=64"}, "rows=64 is a setting: give settings to --set, joined by commas without spaces (--set WG=128,rows=64)"},
		{"run bad set", []string{"run", "attn_fwd", "--set", "BQ"}, `--set "BQ": write NAME=VALUE`},
		{"run set without a name", []string{"run", "attn_fwd", "--set", "=32"}, `--set "=32": write NAME=VALUE`},
		{"run bad value", []string{"run", "attn_fwd", "--set", "BQ=big"}, `"big" is not an integer`},
		{"run unknown knob", []string{"run", "attn_fwd", "--set", "XX=1"}, `has no knob, dim or flag "XX"`},
		{"run knob off schema", []string{"run", "attn_fwd", "--set", "BQ=48"}, "BQ=48 is not allowed: use one of 8, 16, 32, 64, 128"},
		{"run zero dim", []string{"run", "attn_fwd", "--set", "Lq=0"}, "Lq=0 is out of range"},
		{"run negative dim", []string{"run", "softmax_bwd", "--set", "rows=-3"}, "rows=-3 is out of range"},
		{"run bad dtype", []string{"run", "attn_fwd", "--dtype", "f8"}, `unknown dtype "f8"`},
		{"run rule violation", []string{"run", "attn_fwd", "--set", "BQ=8,WM=4", "--time-limit", "0.1"}, "invalid spec"},
		{"run absurd dims", []string{"run", "attn_fwd", "--set", "B=64,H=256,Hkv=256,Lq=65536,Lk=65536,D=256", "--time-limit", "0.1"}, "reduce the dims"},
		{"run resume", []string{"run", "attn_fwd", "--resume", otherCSV}, "--resume is for sweeps"},
		{"tui with csv", []string{"--csv", "x.csv"}, "need --config FILE"},
		{"nan noise", []string{"--noise", "NaN", "--config", goodSweep}, "--noise=NaN: use a fraction between 0 and 1"},
		{"inf time limit", []string{"--time-limit", "+Inf", "--config", goodSweep}, "--time-limit=+Inf: use a positive number of seconds"},
		{"nan min-time", []string{"run", "attn_fwd", "--min-time", "nan"}, "--min-time=nan: use a positive number of seconds"},
		{"nan timeout", []string{"--timeout", "NaN", "--config", goodSweep}, "--timeout=NaN"},
		{"negative warmup", []string{"--warmup", "-1", "--config", goodSweep}, "--warmup=-1"},
		{"csv is the sweep", []string{"--config", goodSweep, "--csv", goodSweep}, "--csv takes the CSV file to write (e.g. results.csv); the sweep file goes in --config"},
		{"csv names a new yaml", []string{"--config", goodSweep, "--csv", filepath.Join(dir, "res.yaml")}, "the sweep file goes in --config"},
		{"resume names a yaml", []string{"--config", goodSweep, "--resume", "res.YML"}, "--resume res.YML: --resume takes the CSV file"},
		{"run set twice in one group", []string{"run", "attn_fwd", "--set", "BQ=32,BQ=64"}, "--set gives BQ twice (BQ=32 and BQ=64)"},
		{"run set twice: a loop", []string{"run", "attn_fwd", "--set", "BQ=32,BQ=64"}, "for v in 32 64; do mltop … --set BQ=$v; done"},
		{"run set twice in two flags", []string{"run", "attn_fwd", "--set", "BQ=32", "--set", "D=64,BQ=64"}, "--set gives BQ twice"},
		{"run bad bool", []string{"run", "attn_fwd", "--set", "causal=maybe"}, `"maybe" is not a boolean: use true/false, 1/0, yes/no or on/off`},
		{"negative seed", []string{"run", "attn_fwd", "--seed", "-1"}, `run: --seed=-1: use a whole number, 0 or more`},
		{"word for a float flag", []string{"--noise", "1%", "--config", goodSweep}, `--noise=1%: use a fraction between 0 and 1 (0.01 is 1%)`},
		{"fraction for an int flag", []string{"run", "attn_fwd", "--min-samples", "2.5"}, `run: --min-samples=2.5: use a whole number of at least 1`},
		{"negative min-samples", []string{"run", "attn_fwd", "--min-samples", "-3"}, "--min-samples=-3: use a whole number of at least 1"},
		{"zero max-rows", []string{"--max-rows", "0", "--config", goodSweep}, "--max-rows=0: use a whole number of at least 1"},
	}
	for _, c := range cases {
		code, _, stderr := runMain(t, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", c.name, code, stderr)
			continue
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("%s: stderr %q lacks %q", c.name, stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a directory was created for the unwritable CSV")
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := runMain(t, "list")
	for _, want := range []string{"Backends:", "cpu    found", "metal  missing", "cuda", "attn_fwd", "BQ       {8, 16, 32, 64, 128}", "softmax_bwd", "causal", "dtypes: f32, f16, bf16"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
	if code != 0 || strings.Contains(stdout, "test_fault") {
		t.Errorf("exit %d; test families must be hidden", code)
	}
}

var updateList = flag.Bool("update", false, "rewrite kernels/all/testdata/list.golden from `mltop list`")

// TestListGolden holds the family part of `mltop list` to a golden shared
// with kernels/all's plan golden, so that moving families changes neither.
func TestListGolden(t *testing.T) {
	code, stdout, _ := runMain(t, "list")
	if code != 0 {
		t.Fatalf("list exited %d", code)
	}
	_, fams, ok := strings.Cut(stdout, "Kernel families:\n")
	if !ok {
		t.Fatalf("list prints no \"Kernel families:\" section:\n%s", stdout)
	}
	for _, f := range profiler.Families(false) {
		if !strings.Contains(fams, "\n  "+f.Name()+" — ") {
			t.Errorf("list lacks family %s", f.Name())
		}
	}
	path := filepath.Join("kernels", "all", "testdata", "list.golden")
	if *updateList {
		if err := os.WriteFile(path, []byte(fams), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run ListGolden -update . creates it)", err)
	}
	if string(want) != fams {
		t.Errorf("the families in `mltop list` differ from %s (if deliberate: go test -run ListGolden -update .):\n%s", path, fams)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, _ := runMain(t, "help")
	if code != 0 || !strings.Contains(stdout, "mltop --config sweep.yaml") || !strings.Contains(stdout, "-time-limit") || !strings.Contains(stdout, "Exit codes") {
		t.Errorf("help:\n%s", stdout)
	}
	code, _, stderr := runMain(t, "--help")
	if code != 0 || !strings.Contains(stderr, "Usage:") {
		t.Errorf("--help: exit %d\n%s", code, stderr)
	}
	// The exit codes name every status that makes a sweep exit 1, as
	// results spell them, and the invalid rows' 2 (README "Exit codes").
	_, codes, _ := strings.Cut(stdout, "Exit codes:")
	codes, _, _ = strings.Cut(codes, "Flags:")
	codes = strings.Join(strings.Fields(codes), " ")
	for _, st := range []profiler.Status{profiler.StatusMismatch, profiler.StatusCompileError, profiler.StatusCrashed, profiler.StatusTimeout, profiler.StatusError, profiler.StatusCancelled, profiler.StatusUnchecked} {
		if !strings.Contains(codes, string(st)) {
			t.Errorf("help's exit codes lack %s: %s", st, codes)
		}
	}
	if !strings.Contains(codes, "2 bad input") || !strings.Contains(codes, "invalid rows") {
		t.Errorf("help's exit code 2: %s", codes)
	}
}

func TestReportCommand(t *testing.T) {
	sweep := writeFile(t, "bwd.yaml", fastDefaults+`backend: cpu
sweeps:
  - kernel: attn_bwd
    dims: {B: 1, H: 2, Hkv: 2, D: 64, "Lq,Lk": 64}
    flags: {causal: [false, true]}
  - kernel: attn_bwd_unfused
    dims: {B: 1, H: 2, Hkv: 2, D: 64, "Lq,Lk": 64}
    flags: {causal: [false, true]}
`)
	out := filepath.Join(t.TempDir(), "bwd.csv")
	if code, stdout, stderr := runMain(t, "--config", sweep, "--csv", out); code != 0 {
		t.Fatalf("sweep exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := runMain(t, "report", out)
	if code != 0 || !strings.Contains(stdout, "attn_bwd") || !strings.Contains(stdout, "unfused") {
		t.Errorf("report exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runMain(t, "report", filepath.Join(t.TempDir(), "none.csv")); code != 2 || !strings.Contains(stderr, "none.csv does not exist") {
		t.Errorf("missing file: exit %d %s", code, stderr)
	}
}

func TestCalibrateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a second")
	}
	t.Setenv("MLTOP_CACHE_DIR", t.TempDir())
	code, stdout, stderr := runMain(t, "calibrate", "--backend", "cpu")
	if code != 0 || !strings.Contains(stdout, "copy bandwidth") || !strings.Contains(stdout, "f32") || !strings.Contains(stdout, "cached in") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// the next run holds its result against the measured ceilings
	code, stdout, _ = runMain(t, "run", "softmax_bwd", "--set", "rows=64,cols=256", "--hot", "--time-limit", "0.2")
	if code != 0 || !strings.Contains(stdout, "of measured peak") {
		t.Errorf("run after calibrate:\n%s", stdout)
	}
}

// TestBackendUnavailableSaidOnce: the reason a backend cannot open appears
// once, whether it was opened in process or by a worker (whose fatal line
// already carries the full sentence).
func TestBackendUnavailableSaidOnce(t *testing.T) {
	if ok, _ := cuda.Available(); ok {
		t.Skip("CUDA is available here")
	}
	sweep := writeFile(t, "s.yaml", fastDefaults+"sweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 2, cols: 8}\n")
	for _, isolate := range []string{"off", "on"} {
		code, _, stderr := runMain(t, "--backend", "cuda", "--isolate", isolate, "--config", sweep)
		if code != 2 {
			t.Errorf("isolate %s: exit %d: %s", isolate, code, stderr)
		}
		for _, once := range []string{"backend is not available here", "(see `mltop list`"} {
			if n := strings.Count(stderr, once); n != 1 {
				t.Errorf("isolate %s: %q appears %d times:\n%s", isolate, once, n, stderr)
			}
		}
	}
	// An error that already says it is passed on unchanged, however deep.
	inner := unavailable("cuda", errors.New("no driver"))
	for _, err := range []error{inner, fmt.Errorf("opening: %w", inner), &run.WorkerFatal{Msg: inner.Error()}} {
		if got := unavailable("cuda", err).Error(); strings.Count(got, "not available here") != 1 || strings.Count(got, "mltop list") != 1 {
			t.Errorf("doubled: %s", got)
		}
	}
}

func TestSetBooleanWordsMatchYAML(t *testing.T) {
	for word, want := range map[string]bool{"yes": true, "on": true, "1": true, "TRUE": true, "no": false, "off": false, "0": false, "false": false} {
		s, err := parseSpec("attn_fwd", "", []string{"causal=" + word})
		if err != nil {
			t.Fatalf("causal=%s: %v", word, err)
		}
		if s.Flags["causal"] != want {
			t.Errorf("causal=%s gave %v", word, s.Flags["causal"])
		}
	}
}

// TestSweepAnnounce: the count and time range come before anything runs; a
// big sweep from a terminal needs --yes and runs nothing without it.
func TestSweepAnnounce(t *testing.T) {
	vals := make([]string, 0, 60)
	for i := 1; i <= 60; i++ {
		vals = append(vals, fmt.Sprint(i))
	}
	list := "[" + strings.Join(vals, ", ") + "]"
	big := writeFile(t, "big.yaml", fastDefaults+"sweeps:\n  - kernel: softmax_bwd\n    dims: {rows: "+list+", cols: "+list+"}\n")
	old := stdinIsTerminal
	defer func() { stdinIsTerminal = old }()
	stdinIsTerminal = func() bool { return true }
	out := filepath.Join(t.TempDir(), "big.csv")
	code, _, stderr := runMain(t, "--config", big, "--csv", out)
	if code != 2 || !strings.Contains(stderr, "3600 specs to run from") || !strings.Contains(stderr, "3600 specs is more than 2000: add --yes") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused sweep created its CSV")
	}
	small := writeFile(t, "small.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n    dims: {rows: 2, cols: 8}\n")
	code, _, stderr = runMain(t, "--config", small)
	if code != 0 || !strings.Contains(stderr, "2 specs to run from") || !strings.Contains(stderr, "(2 kernel builds); measuring takes") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}

func TestTUIIsolatesByDefault(t *testing.T) {
	for flag, want := range map[string]string{"auto": "on", "on": "on", "off": "off"} {
		if got := tuiIsolate(flag); got != want {
			t.Errorf("--isolate %s: the session uses %s, want %s", flag, got, want)
		}
	}
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// TestProgressAndTableShareATerminal: with stdout and stderr on one
// terminal, every row comes out above the bar (through the progress
// container, on stderr), in order, each fitting the width, with the
// differing part of the spec visible; piped, rows go to stdout whole.
func TestProgressAndTableShareATerminal(t *testing.T) {
	sweep := writeFile(t, "s.yaml", `defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}
sweeps:
  - kernel: attn_fwd
    knobs: {BQ: 16, BK: 16, WM: 1, WN: 1}
    dims: {B: 1, H: 1, Hkv: 1, Lq: [16, 32, 48], Lk: 16, D: 64}
`)
	old := terminalWidth
	defer func() { terminalWidth = old }()
	terminalWidth = func(io.Writer) (int, bool) { return 60, true }
	code, stdout, stderr := runMain(t, "--config", sweep)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("rows went to stdout beside the bar:\n%s", stdout)
	}
	var rows []string
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(stderr, ""), "\n") {
		line = strings.TrimRight(line, "\r ")
		if strings.HasPrefix(line, "Lq=") || strings.HasPrefix(line, "spec") || strings.HasPrefix(line, "every row:") {
			rows = append(rows, line)
			if n := len([]rune(line)); n > 60 {
				t.Errorf("row of %d columns on a 60-column terminal: %q", n, line)
			}
		}
	}
	want := []string{"every row:", "spec", "Lq=16", "Lq=32", "Lq=48"}
	if len(rows) != len(want) {
		t.Fatalf("rows %q\nstderr:\n%s", rows, stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(rows[i], w) {
			t.Errorf("row %d is %q, want it to start with %q", i, rows[i], w)
		}
	}
	if !strings.Contains(stderr, "3/3") {
		t.Errorf("no progress bar:\n%s", stderr)
	}

	terminalWidth = func(io.Writer) (int, bool) { return 0, false }
	code, stdout, stderr = runMain(t, "--config", sweep)
	if code != 0 || strings.Contains(stderr, "3/3") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, lq := range []string{"16", "32", "48"} {
		full := "attn_fwd f32 BQ=16 BK=16 WM=1 WN=1 | B=1 H=1 Hkv=1 Lq=" + lq + " Lk=16 D=64"
		if !strings.Contains(stdout, full+" ") {
			t.Errorf("piped table lacks the whole spec %q:\n%s", full, stdout)
		}
	}
	if strings.Contains(stdout, "…") {
		t.Errorf("piped table cut something:\n%s", stdout)
	}
}

// TestInterruptedSweepSaysWhatIsLeft: after ctrl-C the message counts the
// specs still to measure and says how to go on.
func TestInterruptedSweepSaysWhatIsLeft(t *testing.T) {
	sweep := writeFile(t, "s.yaml", fastDefaults+"sweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64, 128]}\n    dims: {rows: 2, cols: 8}\n")
	out := filepath.Join(t.TempDir(), "i.csv")
	var o options
	fs := newFlagSet("mltop")
	o.register(fs)
	if err := fs.Parse([]string{"--csv", out, "--isolate", "off"}); err != nil {
		t.Fatal(err)
	}
	o.set = setFlags(fs)
	// ctrl-C before the sweep starts: nothing ran, nothing to resume.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	err := runSweep(ctx, newTestSession(&stdout, &stderr), sweep, &o, &stdout, &stderr)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(ee.msg, "nothing ran") {
		t.Fatalf("cancelled before the start: err %v", err)
	}
	// ctrl-C once the sweep is announced (the banner's write cancels).
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	stdout.Reset()
	stderr.Reset()
	errw := cancelOnWrite{w: &stderr, text: "to run from", cancel: cancel}
	err = runSweep(ctx, newTestSession(&stdout, errw), sweep, &o, &stdout, errw)
	if !errors.As(err, &ee) || ee.code != exitFailed {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"interrupted: 3 of 3 specs still to measure (3 not run, 0 cancelled)", "--resume " + out} {
		if !strings.Contains(ee.msg, want) {
			t.Errorf("%q lacks %q", ee.msg, want)
		}
	}
	if !strings.Contains(stderr.String(), "3 specs: 0 ok, 3 not run") {
		t.Errorf("summary:\n%s", stderr.String())
	}
}

// cancelOnWrite calls cancel when a write to w holds text.
type cancelOnWrite struct {
	w      io.Writer
	text   string
	cancel func()
}

func (c cancelOnWrite) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.text) {
		c.cancel()
	}
	return c.w.Write(b)
}
