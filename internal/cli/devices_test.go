package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// brokenDeviceHook runs in test workers' test_fault kernel. With
// MLTOP_TEST_GATE_DIR set, the worker of device MLTOP_TEST_BROKEN_DEVICE
// dies on every spec (and opens the gate after its third death); the
// workers of other devices wait for the gate first. So the broken device
// fails three times before the good one confirms that those specs run.
func brokenDeviceHook() {
	dir := os.Getenv("MLTOP_TEST_GATE_DIR")
	if dir == "" {
		return
	}
	gate := filepath.Join(dir, "gate")
	if os.Getenv(deviceOrdinalEnv) == os.Getenv("MLTOP_TEST_BROKEN_DEVICE") {
		f, _ := os.OpenFile(filepath.Join(dir, "deaths"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		f.WriteString("x")
		f.Close()
		if b, _ := os.ReadFile(filepath.Join(dir, "deaths")); len(b) >= 3 {
			os.WriteFile(gate, nil, 0o644)
		}
		os.Stderr.WriteString("test: GPU fell off the bus\n")
		os.Exit(3)
	}
	for i := 0; i < 6000; i++ {
		if _, err := os.Stat(gate); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func keyStatus(rows []map[string]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r["MODE"]+" "+r["N"]+" "+r["status"])
	}
	slices.Sort(out)
	return out
}

const devicesSweep = fastDefaults + `backend: cpu
sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: [16, 32, 48, 64, 80, 96]}
  - kernel: test_fault
    knobs: {MODE: 3}
`

// Two fake devices (CPU workers) give the rows of a one-device run: the
// same specs and statuses, each row stamped with the device it ran on. The
// spec whose worker exits is recorded as crashed once (it crashes on both
// devices), and its device gets a fresh worker.
func TestDevicesSameRowsAsOneDevice(t *testing.T) {
	sweep := writeFile(t, "d.yaml", devicesSweep)
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.csv"), filepath.Join(dir, "two.csv")
	if code, _, stderr := runMain(t, "--config", sweep, "--isolate", "on", "--csv", one); code != 1 {
		t.Fatalf("one device: exit %d\n%s", code, stderr)
	}
	t.Setenv(fakeDevicesEnv, "2")
	code, _, stderr := runMain(t, "--config", sweep, "--devices", "all", "--csv", two, "--phases")
	if code != 1 {
		t.Fatalf("two devices: exit %d\n%s", code, stderr)
	}
	// --phases: one line per device and one for the sweep; the CPU times
	// the checks' runs, and their times come through the workers' pipes
	for _, want := range []string{"mltop: phases device 0 (", "mltop: phases device 1 (", "start-up ", "idle at the end ", "mltop: phases 2 devices in ", "checks' runs ", "running kernels "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in stderr:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stderr, "cpu on 2 devices (0 ") || !strings.Contains(stderr, "7 specs: 6 ok, 1 crashed") {
		t.Errorf("stderr:\n%s", stderr)
	}
	r1, r2 := readCSV(t, one), readCSV(t, two)
	if a, b := keyStatus(r1), keyStatus(r2); !slices.Equal(a, b) {
		t.Errorf("one device:\n%v\ntwo devices:\n%v", a, b)
	}
	for _, r := range r2 {
		if r["device_ordinal"] != "0" && r["device_ordinal"] != "1" {
			t.Errorf("row %v: device_ordinal %q", r, r["device_ordinal"])
		}
		if r["MODE"] == "3" && !strings.Contains(r["error"], "device lost, exiting") {
			t.Errorf("crash row: %q", r["error"])
		}
	}
	// --resume across devices: keep three rows, not the crashed spec's
	// (rows come in the order the devices finish them), so it runs again
	// and crashes again
	b, _ := os.ReadFile(two)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kept := recs[:1]
	for i, r := range r2 {
		if r["MODE"] != "3" && len(kept) < 4 {
			kept = append(kept, recs[i+1])
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(kept)
	part := filepath.Join(dir, "part.csv")
	os.WriteFile(part, buf.Bytes(), 0o644)
	code, _, stderr = runMain(t, "--config", sweep, "--devices", "0,1", "--resume", part)
	if code != 1 || !strings.Contains(stderr, "(3 skipped") {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if a, b := keyStatus(r1), keyStatus(readCSV(t, part)); !slices.Equal(a, b) {
		t.Errorf("after --resume:\n%v\nwant\n%v", b, a)
	}
}

// A device whose workers die on every spec is dropped after three deaths;
// its specs run on the other device and every row is ok.
func TestDevicesDropsABrokenDevice(t *testing.T) {
	sweep := writeFile(t, "d.yaml", fastDefaults+`backend: cpu
sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: [16, 32, 48, 64, 80, 96, 112, 128]}
`)
	t.Setenv(fakeDevicesEnv, "2")
	t.Setenv("MLTOP_TEST_GATE_DIR", t.TempDir())
	t.Setenv("MLTOP_TEST_BROKEN_DEVICE", "1")
	out := filepath.Join(t.TempDir(), "d.csv")
	code, _, stderr := runMain(t, "--config", sweep, "--devices", "all", "--csv", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "device 1 (") || !strings.Contains(stderr, "dropped after 3 failures in a row") || !strings.Contains(stderr, "GPU fell off the bus") {
		t.Errorf("stderr:\n%s", stderr)
	}
	rows := readCSV(t, out)
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r["status"] != "ok" || r["device_ordinal"] != "0" {
			t.Errorf("row N=%s: %s on %s", r["N"], r["status"], r["device_ordinal"])
		}
	}
}

// A device whose worker does not start is left out; the sweep runs on the
// others. None starting is bad input.
func TestDevicesLeavesOutADeadDevice(t *testing.T) {
	// 4 specs of at least 50 ms of samples each: the live device is still
	// busy when the dead one's start fails (2 specs of 1 ms ended first on
	// a loaded CI host, and the sweep then said "still starting")
	sweep := writeFile(t, "d.yaml", `defaults: {time_limit: 0.3, min_time: 0.05, warmup: 0.001, hot: true}
backend: cpu
sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: [16, 32, 64, 128]}
`)
	t.Setenv(fakeDevicesEnv, "3")
	t.Setenv("MLTOP_TEST_DEAD_DEVICE", "2")
	// both start at once: the dead one fails before the other has run its
	// specs, so the sweep says why (not "still starting")
	t.Setenv(run.WorkerStartsEnv, "2")
	code, _, stderr := runMain(t, "--config", sweep, "--devices", "1,2")
	if code != 0 || !strings.Contains(stderr, "device 2 left out: its worker did not start") || !strings.Contains(stderr, "test: no such device") || !strings.Contains(stderr, "4 specs: 4 ok") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	code, _, stderr = runMain(t, "--config", sweep, "--devices", "2")
	if code != 2 || !strings.Contains(stderr, "no device could start a worker") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

func TestResolveDevices(t *testing.T) {
	count := func(n int, err error) deviceCounter {
		return func(string) (int, error) { return n, err }
	}
	for _, c := range []struct {
		v    string
		n    int
		err  error
		want []int
		msg  string
	}{
		{"all", 4, nil, []int{0, 1, 2, 3}, ""},
		{"0,2,3", 4, nil, []int{0, 2, 3}, ""},
		{" 3 , 1", 4, nil, []int{3, 1}, ""},
		{"4", 4, nil, nil, `device 4 asked for, but the cuda backend sees 4 device(s) (0 to 3)`},
		{"1,1", 4, nil, nil, "device 1 is listed twice"},
		{"a", 4, nil, nil, `"a" is not a device ordinal`},
		{"-1", 4, nil, nil, `"-1" is not a device ordinal`},
		{"", 4, nil, nil, `"" is not a device ordinal`},
		{"all", 0, nil, nil, "sees no device"},
		{"all", 0, errors.New("no NVIDIA driver"), nil, "--devices all: no NVIDIA driver"},
	} {
		got, err := resolveDevices(c.v, "cuda", count(c.n, c.err), false)
		if c.msg == "" {
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%q: %v %v, want %v", c.v, got, err, c.want)
			}
			continue
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitBadInput || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v, want exit 2 with %q", c.v, err, c.msg)
		}
	}
	if got, err := resolveDevices("0,0", "cuda", count(1, nil), true); err != nil || !slices.Equal(got, []int{0, 0}) {
		t.Errorf("repeat: %v %v", got, err)
	}
	// the CPU backend is one device unless the test hook says otherwise
	if _, err := countDevices("cpu"); err == nil || !strings.Contains(err.Error(), "the cpu backend is one device") {
		t.Errorf("cpu: %v", err)
	}
}

func TestWorkerEnvPinsTheDevice(t *testing.T) {
	has := func(env []string, kv string) bool { return slices.Contains(env, kv) }
	e := workerEnv("cuda", 2, "")
	if !has(e, "CUDA_VISIBLE_DEVICES=2") || !has(e, "MLTOP_CUDA_DEVICE=0") || !has(e, "MLTOP_DEVICE_ORDINAL=2") {
		t.Errorf("%v", e)
	}
	// under Slurm's CUDA_VISIBLE_DEVICES=4,6,7 the parent's device 1 is GPU 6
	if e := workerEnv("cuda", 1, "4,6,7"); !has(e, "CUDA_VISIBLE_DEVICES=6") {
		t.Errorf("%v", e)
	}
	if e := workerEnv("cuda", 0, "GPU-aa11, GPU-bb22"); !has(e, "CUDA_VISIBLE_DEVICES=GPU-aa11") {
		t.Errorf("%v", e)
	}
	if e := workerEnv("cpu", 1, "3"); len(e) != 1 || e[0] != "MLTOP_DEVICE_ORDINAL=1" {
		t.Errorf("%v", e)
	}
}

// fiveShapeSweep is a CPU sweep of five one-spec shapes, for the shard tests.
const fiveShapeSweep = fastDefaults + `backend: cpu
sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: [16, 32, 48, 64, 80]}
`

// Shards of a sweep, merged, give the rows of the whole sweep; a missing
// shard is exit 1 naming what is missing; bad input is exit 2.
func TestShardsAndMerge(t *testing.T) {
	sweep := writeFile(t, "s.yaml", fiveShapeSweep)
	dir := t.TempDir()
	var shards []string
	for i := range 3 {
		out := filepath.Join(dir, "s"+string(rune('0'+i))+".csv")
		t.Setenv("JOB_COMPLETION_INDEX", string(rune('0'+i)))
		code, _, stderr := runMain(t, "--config", sweep, "--shard", "auto/3", "--csv", out)
		if code != 0 || !strings.Contains(stderr, "shard "+string(rune('0'+i))+"/3:") || !strings.Contains(stderr, "of the sweep's 5 shapes (whole shapes are dealt") {
			t.Fatalf("shard %d: exit %d\n%s", i, code, stderr)
		}
		shards = append(shards, out)
	}
	all := filepath.Join(dir, "all.csv")
	code, _, stderr := runMain(t, append(append([]string{"merge"}, shards...), "-o", all, "--config", sweep)...)
	if code != 0 || !strings.Contains(stderr, "5 rows from 3 files → 5 specs") || !strings.Contains(stderr, "every spec of") {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	if got := keyStatus(readCSV(t, all)); !slices.Equal(got, []string{"0 16 ok", "0 32 ok", "0 48 ok", "0 64 ok", "0 80 ok"}) {
		t.Errorf("merged %v", got)
	}
	// a shard twice: duplicates dropped
	code, _, stderr = runMain(t, "merge", shards[0], shards[0], shards[1], shards[2], "-o", filepath.Join(dir, "dup.csv"))
	if code != 0 || !strings.Contains(stderr, "duplicate rows dropped") {
		t.Errorf("duplicates: exit %d\n%s", code, stderr)
	}
	// a shard missing
	code, _, stderr = runMain(t, "merge", shards[0], shards[1], "-o", filepath.Join(dir, "part.csv"), "--config", sweep)
	if code != 1 || !strings.Contains(stderr, "of the 5 specs of") || !strings.Contains(stderr, "have no row") {
		t.Errorf("missing: exit %d\n%s", code, stderr)
	}
	// another sweep's columns
	other := filepath.Join(dir, "other.csv")
	if code, _, stderr := runMain(t, "--config", writeFile(t, "o.yaml", fastDefaults+"backend: cpu\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 4, cols: 8}\n"), "--csv", other); code != 0 {
		t.Fatalf("other: %d %s", code, stderr)
	}
	code, _, stderr = runMain(t, "merge", shards[0], other, "-o", filepath.Join(dir, "bad.csv"))
	if code != 2 || !strings.Contains(stderr, other) || !strings.Contains(stderr, "its columns differ") {
		t.Errorf("columns: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"merge", shards[0]},                       // no -o
		{"merge", "-o", all + "2"},                 // no inputs
		{"merge", shards[0], "-o", shards[0]},      // output is an input
		{"merge", shards[0], shards[1], "-o", all}, // output exists
		{"merge", filepath.Join(dir, "nope.csv"), "-o", filepath.Join(dir, "x.csv")},
	} {
		if code, _, stderr := runMain(t, args...); code != 2 {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for _, v := range []string{"0/0", "3/2", "x/y", "auto"} {
		code, _, stderr := runMain(t, "--config", sweep, "--shard", v)
		if code != 2 || !strings.Contains(stderr, `--shard "`+v+`"`) {
			t.Errorf("--shard %s: exit %d\n%s", v, code, stderr)
		}
	}
	if code, _, stderr := runMain(t, "--shard", "0/2"); code != 2 || !strings.Contains(stderr, "--shard and --claims are for sweeps") {
		t.Errorf("--shard without --config: exit %d\n%s", code, stderr)
	}
}

// Shards with one --claims directory, run one after the other: the first
// runs its own specs and takes all the others', the later ones find them
// taken; merged, every spec has one row. --claims without --shard, or of
// another split, is exit 2 naming the directory.
func TestShardsWithClaims(t *testing.T) {
	sweep := writeFile(t, "s.yaml", fiveShapeSweep)
	dir := t.TempDir()
	claims := filepath.Join(dir, "claims")
	var shards []string
	for i, want := range []string{"5 specs: 5 ok; 3 taken from the other shards, 0 of this shard's run by them", "0 specs: 0 ok; 0 taken from the other shards, 2 of this shard's run by them", "0 specs: 0 ok; 0 taken from the other shards, 1 of this shard's run by them"} {
		out := filepath.Join(dir, fmt.Sprintf("s%d.csv", i))
		code, _, stderr := runMain(t, "--config", sweep, "--shard", fmt.Sprintf("%d/3", i), "--claims", claims, "--csv", out, "--quiet")
		if code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("shard %d: exit %d, want %q\n%s", i, code, want, stderr)
		}
		shards = append(shards, out)
	}
	all := filepath.Join(dir, "all.csv")
	code, _, stderr := runMain(t, append(append([]string{"merge"}, shards...), "-o", all, "--config", sweep)...)
	if code != 0 || !strings.Contains(stderr, "5 rows from 3 files → 5 specs") {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--claims", claims}, "--claims " + claims + " balances the shards of one sweep: add --shard i/n"},
		{[]string{"--shard", "0/2", "--claims", claims}, "--claims " + claims + " holds the claims of a sweep split 3 ways, and this shard is one of 2"},
	} {
		code, _, stderr := runMain(t, append([]string{"--config", sweep}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 saying %q\n%s", c.args, code, c.want, stderr)
		}
	}
}

func TestDeviceText(t *testing.T) {
	got := deviceText([]run.DeviceCount{{Ordinal: 0, Done: 12, Busy: true}, {Ordinal: 2, Done: 3, Dropped: true}, {Ordinal: 3, Done: 0}})
	if got != "[gpu0:12* gpu2:3x gpu3:0]" {
		t.Errorf("%q", got)
	}
}

// The workers of a multi-device sweep share a temporary directory for
// float64 references: made in TMPDIR, gone after the sweep, and the
// rows are those of one device.
func TestDevicesShareHostWorkAndCleanUp(t *testing.T) {
	cfg := writeFile(t, "s.yaml", "backend: cpu\ndefaults: {time_limit: 0.05}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64, 128]}\n    dims: {rows: 4, cols: [64, 128]}\n")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv(fakeDevicesEnv, "2")
	csv := filepath.Join(t.TempDir(), "d.csv")
	code, _, stderr := runMain(t, "--config", cfg, "--devices", "all", "--csv", csv, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range readCSV(t, csv) {
		if r["status"] != "ok" {
			t.Errorf("row %v", r)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "mltop-shared-*")); len(left) != 0 {
		t.Errorf("shared directories left after the sweep: %v", left)
	}
}

// Each of N workers may generate inputs on all but N−1 cores (at least
// one); the parent's own MLTOP_FILL_THREADS wins when it is a count, and
// anything else is named in a warning and ignored.
func TestFillThreadsFor(t *testing.T) {
	for _, c := range []struct {
		cores, workers int
		override       string
		want           int
		warn           string
	}{
		{cores: 64, workers: 4, want: 61},
		{cores: 16, workers: 1, want: 16},
		{cores: 16, workers: 8, want: 9},
		{cores: 2, workers: 4, want: 1},
		{cores: 64, workers: 4, override: "8", want: 8},
		{cores: 64, workers: 4, override: "0", want: 61, warn: `MLTOP_FILL_THREADS="0" is not a positive whole number of goroutines: each worker generates inputs on 61; set it to a count such as 8, or unset it`},
		{cores: 16, workers: 2, override: "lots", want: 15, warn: `MLTOP_FILL_THREADS="lots" is not a positive whole number`},
	} {
		got, warn := fillThreadsFor(c.cores, c.workers, c.override)
		if got != c.want {
			t.Errorf("%d cores, %d workers, override %q: %d threads, want %d", c.cores, c.workers, c.override, got, c.want)
		}
		if (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
			t.Errorf("%d cores, %d workers, override %q: warning %q, want one with %q", c.cores, c.workers, c.override, warn, c.warn)
		}
	}
}

// The interactive session waits for every device's worker before it
// opens, but not past ctrl-C: a worker still starting (or still waiting
// for its turn) is not waited for, and the session does not open.
func TestAllStartedStopsOnCtrlC(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // start slots of its own
	hello := `{"type":"hello","device":{"backend":"cpu","name":"fake"}}`
	gate := filepath.Join(t.TempDir(), "go")
	script := `while [ ! -e "$1" ]; do sleep 0.01; done; echo '` + hello + `'; exec sleep 60`
	p := run.StartWorkerPool(func() []string { return []string{"sh", "-c", script, "worker", gate} }, nil)
	defer func() { // let it start, then stop it
		os.WriteFile(gate, nil, 0o600)
		p.Wait(context.Background())
		p.Close()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // ctrl-C
	done := make(chan []run.Device, 1)
	go func() { done <- allStarted(ctx, []run.Device{{Ordinal: 0, Exec: p}}, io.Discard) }()
	select {
	case devs := <-done:
		if len(devs) != 0 {
			t.Errorf("after ctrl-C the session got devices %v", devs)
		}
	case <-time.After(time.Minute): // not a timing: without the fix it waits for the gate
		t.Fatal("allStarted still waits for a worker a minute after ctrl-C")
	}
}
