package cli

// These tests register user kernels in the process: the file sorts after
// main_test.go so that TestListGolden sees only the built-in families.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// TestAnnounceAfterInputChecks: a CSV that holds rows, a CSV in a folder
// that does not exist (or is a file) and --devices on the CPU are refused
// before the sweep is announced; the count is singular
// for one spec and leaves invalid specs out, naming them.
func TestAnnounceAfterInputChecks(t *testing.T) {
	one := writeFile(t, "one.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n")
	full := filepath.Join(t.TempDir(), "full.csv")
	os.WriteFile(full, []byte("time,backend,kernel\nx,cpu,softmax_bwd\n"), 0o644)
	for _, args := range [][]string{
		{"--config", one, "--backend", "cpu", "--csv", full},
		{"--config", one, "--backend", "cpu", "--devices", "all"},
		{"--config", one, "--backend", "cpu", "--csv", filepath.Join(t.TempDir(), "no", "such", "dir.csv")},
		{"--config", one, "--backend", "cpu", "--csv", filepath.Join(full, "x.csv")},
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

// TestListShowsRulesAndOpenRanges: list --kernel prints a manifest's rules
// and a dim without an upper bound as ≥min, not 1..2147483647.
func TestListShowsRulesAndOpenRanges(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.cu"), []byte(cliKernel), 0o644)
	manifest := "name: list_rules\nsources: {cuda: k.cu}\nknobs:\n  WG: {values: [64, 128], default: 64}\ndims:\n  N: {default: 1024, min: 1}\nrules: [\"N % WG == 0\"]\nbuffers:\n  - {name: x, dtype: f32, shape: [N], init: \"normal(0, 1)\"}\n  - {name: y, dtype: f32, shape: [N], out: true}\ndispatches:\n  - entry: scale\n    grid: [\"cdiv(N, WG)\", 1, 1]\n    threads: [WG, 1, 1]\n    args: [x, y, N]\ncheck: none\n"
	os.WriteFile(filepath.Join(dir, "kernel.yaml"), []byte(manifest), 0o644)
	code, out, errs := runMain(t, "list", "--kernel", filepath.Join(dir, "kernel.yaml"))
	if code != 0 {
		t.Fatalf("list: %d %s", code, errs)
	}
	i := strings.Index(out, "list_rules —")
	if i < 0 {
		t.Fatalf("list lacks the kernel:\n%s", out)
	}
	block := out[i:]
	if j := strings.Index(block, "\n\n"); j > 0 {
		block = block[:j]
	}
	if !strings.Contains(block, "rules (a spec must satisfy each):\n      N % WG == 0") || !strings.Contains(block, "≥1") || strings.Contains(block, "2147483647") {
		t.Errorf("list block:\n%s", block)
	}
}

// The banner's time range counts --settle in place of the warm-up, and
// says so: a user who set settle: 1 sees why the least is a second a spec.
func TestBannerNamesSettle(t *testing.T) {
	sw := writeFile(t, "settle.yaml", "defaults: {time_limit: 0.05, min_time: 0.001, warmup: 0.001, hot: true, settle: 0.02}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 2, cols: 8}\n")
	code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet")
	if code != 0 || !strings.Contains(stderr, "(settle (or warmup) + min_time to settle + time_limit each)") {
		t.Errorf("exit %d, banner:\n%s", code, stderr)
	}
	plain := writeFile(t, "plain.yaml", "defaults: {time_limit: 0.05, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    dims: {rows: 2, cols: 8}\n")
	if code, _, stderr := runMain(t, "--config", plain, "--backend", "cpu", "--isolate", "off", "--quiet"); code != 0 || !strings.Contains(stderr, "(warmup + min_time to warmup + time_limit each)") {
		t.Errorf("exit %d, banner without settle:\n%s", code, stderr)
	}
}

// --resume with another cache mode or --settle than the file's rows is refused before
// anything runs, and the file is left as it was: its specs would be
// skipped, and the file would mix two modes.
func TestResumeRefusesOtherSettings(t *testing.T) {
	sw := writeFile(t, "hot.yaml", "defaults: {time_limit: 0.05, min_time: 0.001, warmup: 0.001, cache: hot}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n    dims: {rows: 2, cols: 8}\n")
	out := filepath.Join(t.TempDir(), "hot.csv")
	if code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet", "--csv", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(out)
	code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet", "--resume", out, "--cache", "cold")
	if code != 2 || !strings.Contains(stderr, "2 rows of this sweep were timed with other settings") || !strings.Contains(stderr, "was timed with cache hot, this sweep times it with cache cold") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet", "--resume", out, "--settle", "0.01")
	if code != 2 || !strings.Contains(stderr, "was timed with --settle 0, this sweep times it with --settle 0.01") {
		t.Errorf("--settle 0.01: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Errorf("the file changed:\n%s", after)
	}
	// the same settings resume as ever
	if code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet", "--resume", out); code != 0 || !strings.Contains(stderr, "already in the --resume file") {
		t.Errorf("same mode: exit %d: %s", code, stderr)
	}
}

// TestListNamesAndUserKernelsFirst: list NAME… prints just those kernels;
// list --kernel prints the user's kernels, then one line counting the
// built-in ones instead of their schemas.
func TestListNamesAndUserKernelsFirst(t *testing.T) {
	code, out, errs := runMain(t, "list", "softmax_bwd", "attn_fwd")
	if code != 0 {
		t.Fatalf("list softmax_bwd attn_fwd: %d %s", code, errs)
	}
	if strings.Count(out, " — ") != 2 || strings.Index(out, "softmax_bwd —") > strings.Index(out, "attn_fwd —") || strings.Contains(out, "Backends:") {
		t.Errorf("list with two names: want just softmax_bwd then attn_fwd:\n%s", out)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.cu"), []byte(cliKernel), 0o644)
	manifest := "name: list_first\nsources: {cuda: k.cu}\ndims:\n  N: {default: 1024, min: 1}\nbuffers:\n  - {name: x, dtype: f32, shape: [N], init: \"normal(0, 1)\"}\n  - {name: y, dtype: f32, shape: [N], out: true}\ndispatches:\n  - entry: scale\n    grid: [\"cdiv(N, 64)\", 1, 1]\n    threads: [64, 1, 1]\n    args: [x, y, N]\ncheck: none\n"
	os.WriteFile(filepath.Join(dir, "kernel.yaml"), []byte(manifest), 0o644)
	code, out, errs = runMain(t, "list", "--kernel", dir)
	if code != 0 {
		t.Fatalf("list --kernel: %d %s", code, errs)
	}
	builtin := len(profiler.Families(false)) - 1
	if strings.Count(out, " — ") != 1 || !strings.Contains(out, "list_first —") {
		t.Errorf("list --kernel: want the user kernel's schema only:\n%s", out)
	}
	if want := fmt.Sprintf("and %d built-in kernel families", builtin); !strings.Contains(out, want) {
		t.Errorf("list --kernel: want %q:\n%s", want, out)
	}
}

// TestResumeOfAMissingFileSaysSo: --resume FILE where FILE does not exist
// starts from the beginning and writes FILE (a script's first run), but
// says so on stderr before the sweep starts: a misspelt path is seen
// before everything runs again. A file that exists gets no such line.
func TestResumeOfAMissingFileSaysSo(t *testing.T) {
	sw := writeFile(t, "one.yaml", "defaults: {time_limit: 0.02, min_time: 0.001, warmup: 0.001, hot: true}\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n")
	typo := filepath.Join(t.TempDir(), "typo.cvs")
	note := "mltop: --resume " + typo + " does not exist: nothing to resume, "
	args := []string{"--config", sw, "--backend", "cpu", "--isolate", "off", "--quiet", "--resume", typo}

	code, _, stderr := runMain(t, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(stderr, note+"a run would start the sweep from the beginning and write it\n") {
		t.Errorf("--dry-run: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runMain(t, args...)
	at, banner := strings.Index(stderr, note+"the sweep starts from the beginning and writes it\n"), strings.Index(stderr, "to run from")
	if code != 0 || at < 0 || banner < at {
		t.Errorf("exit %d; want the note before the banner:\n%s", code, stderr)
	}
	if rows := readCSV(t, typo); len(rows) != 1 {
		t.Errorf("%s holds %d rows, want the sweep's 1", typo, len(rows))
	}
	if _, _, stderr = runMain(t, args...); strings.Contains(stderr, "does not exist") {
		t.Errorf("the file exists now, yet:\n%s", stderr)
	}

	// tune (and a sweep's search: block) read --resume too.
	missing := filepath.Join(t.TempDir(), "tune.csv")
	code, _, stderr = runMain(t, tuneArgsFor("softmax_bwd", "--dims", "rows=8,cols=64", "--budget", "1", "--resume", missing)...)
	if code != 0 || !strings.Contains(stderr, "mltop: --resume "+missing+" does not exist: nothing to resume, the search starts from the beginning and writes it\n") {
		t.Errorf("tune: exit %d:\n%s", code, stderr)
	}
}

// TestBannerCountsDuplicates: a value listed twice is one spec, and the
// banner says how many duplicates it dropped, before the count.
func TestBannerCountsDuplicates(t *testing.T) {
	sw := writeFile(t, "dup.yaml", "sweeps:\n  - kernel: softmax_bwd\n    dtypes: [f32, f32]\n    knobs: {WG: [32, 32]}\n    dims: {rows: 2, cols: 8}\n")
	code, _, stderr := runMain(t, "--config", sw, "--backend", "cpu", "--dry-run")
	note := strings.Index(stderr, "mltop: dropped 3 duplicate specs from "+sw)
	count := strings.Index(stderr, "1 spec to run from")
	if code != exitOK || note < 0 || count < note {
		t.Errorf("exit %d, banner:\n%s", code, stderr)
	}
}

// TestDryRunWithoutTheBackend: a sweep for a backend this host lacks (Metal
// on Linux: a sweep planned away from its GPU) is counted by --dry-run,
// with a note saying nothing was checked against a device; run for real,
// the missing backend is an error, as --devices on it is.
func TestDryRunWithoutTheBackend(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Metal may be here")
	}
	sw := writeFile(t, "metal.yaml", "backend: metal\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n    dims: {rows: 2, cols: [8, 16]}\n")
	for _, extra := range [][]string{nil, {"--devices", "all"}} {
		code, _, stderr := runMain(t, append([]string{"--config", sw, "--dry-run"}, extra...)...)
		// (Metal counts its one device without opening it: --devices has no note)
		noted := strings.Contains(stderr, "--dry-run counts the sweep without a device")
		if code != exitOK || noted != (extra == nil) || !strings.Contains(stderr, "4 specs to run from") {
			t.Errorf("%v: exit %d:\n%s", extra, code, stderr)
		}
		code, _, stderr = runMain(t, append([]string{"--config", sw}, extra...)...)
		if code != exitBadInput || !strings.Contains(stderr, "metal backend is not available here") || strings.Contains(stderr, "without a device") {
			t.Errorf("%v without --dry-run: exit %d:\n%s", extra, code, stderr)
		}
	}
}

// TestDryRunDevicesWithoutCUDA: --devices on a host without CUDA cannot
// count its GPUs; --dry-run counts the sweep anyway, a real run refuses.
func TestDryRunDevicesWithoutCUDA(t *testing.T) {
	if _, err := countDevices("cuda"); err == nil {
		t.Skip("CUDA is here")
	}
	sw := writeFile(t, "cuda.yaml", "backend: cuda\nsweeps:\n  - kernel: softmax_bwd\n    knobs: {WG: [32, 64]}\n    dims: {rows: 2, cols: 8}\n")
	code, _, stderr := runMain(t, "--config", sw, "--devices", "all", "--dry-run")
	if code != exitOK || !strings.Contains(stderr, "--dry-run counts the sweep without a device") || !strings.Contains(stderr, "2 specs to run from") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runMain(t, "--config", sw, "--devices", "all")
	if code != exitBadInput || !strings.Contains(stderr, "--devices all: ") {
		t.Errorf("without --dry-run: exit %d:\n%s", code, stderr)
	}
}

// pipeSweep is four quick specs of the test-only family on the CPU.
const pipeSweep = fastDefaults + `backend: cpu
sweeps:
  - kernel: test_fault
    knobs: {MODE: 0}
    dims: {N: [16, 32, 48, 64]}
`

// A watchdog timeout (--timeout, or timeout: in the sweep file) asked of
// specs that run in this process, where nothing stops one midway, is
// said to have no effect, with the way to have it (--isolate on); in a
// worker, or without a timeout, nothing is said.
func TestTimeoutWithoutWorkerWarns(t *testing.T) {
	// 30 s: the warning's subject, not a limit any spec meets (a 0.3 s
	// watchdog killed the race detector's slower workers).
	sweep := writeFile(t, "t.yaml", pipeSweep)
	inFile := writeFile(t, "tf.yaml", strings.Replace(pipeSweep, "hot: true}", "hot: true, timeout: 30}", 1))
	const warning = "has no effect: the cpu backend runs specs in this process, where no watchdog can stop one; add --isolate on"
	for _, tc := range []struct {
		name string
		args []string
		want string // "": no warning
	}{
		{"flag", []string{"--config", sweep, "--timeout", "30"}, "--timeout 30 " + warning},
		{"file", []string{"--config", inFile}, "timeout: 30 in " + inFile + " " + warning},
		{"flag in process", []string{"--config", sweep, "--timeout", "30", "--isolate", "off"}, "--timeout 30 " + warning},
		{"run", []string{"run", "test_fault", "--set", "MODE=0", "--timeout", "30", "--hot"}, "--timeout 30 " + warning},
		{"worker", []string{"--config", sweep, "--timeout", "30", "--isolate", "on"}, ""},
		{"no timeout", []string{"--config", sweep}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runMain(t, tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
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

// --dry-run exits 2 when no spec of the sweep can run on the device it is
// checked against, with the invalid specs grouped by reason; one runnable
// spec is enough for exit 0, and the reasons are listed all the same.
func TestDryRunWithNothingRunnable(t *testing.T) {
	userKernel := filepath.Join(scaffoldKernel(t, "dry_scale"), "k", "kernel.yaml")
	tooBig := "  - kernel: softmax_bwd\n    knobs: {WG: [64, 128]}\n    dims: {rows: 16777216, cols: [1048576, 524288]}\n"
	for _, c := range []struct {
		name, sweeps string
		code         int
		want         []string
	}{
		{"every spec over the indices", tooBig, exitBadInput, []string{
			"and 4 invalid", "mltop: --dry-run: nothing would run: all 4 specs of ", "are invalid; by reason:\n",
			"  2 × Y/dY/dX would hold 17592186044416 elements, more than the kernels' 32-bit indices address",
			"\n      softmax_bwd f32 WG=64 | rows=16777216 cols=1048576\n      softmax_bwd f32 WG=128 | rows=16777216 cols=1048576\n",
			"  2 × Y/dY/dX would hold 8796093022208 elements",
			"change what they name"}},
		{"a user kernel on the CPU", "  - kernel: " + userKernel + "\n    dims: {n: [1000, 2000]}\n", exitBadInput, []string{
			"all 2 specs of ", "; by reason:\n  2 × the CPU backend cannot run user kernel dry_scale: it runs only built-in families' Go code; its only source is CUDA: --backend cuda runs it on an NVIDIA GPU; without one, `mltop check --run ",
			" --set …` (a small shape) runs it on the CUDA emulation\n      dry_scale f32 "}},
		// --devices leaves the dry run without a device: the CPU's refusal holds all the same.
		{"a user kernel on the CPU, --devices", "  - kernel: " + userKernel + "\n    dims: {n: [1000, 2000]}\n", exitBadInput, []string{
			"user kernels count as invalid (the CPU backend runs only built-in families)",
			"all 2 specs of ", "; by reason:\n  2 × the CPU backend cannot run user kernel dry_scale"}},
		{"one runnable spec", tooBig + "  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n", exitOK, []string{
			"1 spec to run from", "and 4 invalid",
			// Some specs invalid: the reasons, grouped, all the same.
			"mltop: --dry-run: 4 specs of ", " would be invalid rows, by reason (change what a reason names, or leave those specs out with where: rules):\n  2 × Y/dY/dX would hold 17592186044416 elements"}},
		{"more reasons than listed", "  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 16777216, cols: [1048576, 524288, 262144, 131072, 65536]}\n  - kernel: softmax_bwd\n    knobs: {WG: 64}\n    dims: {rows: 2, cols: 8}\n", exitOK, []string{
			"mltop: --dry-run: 5 specs of ", "  1 × Y/dY/dX would hold 8796093022208 elements", "\n  2 more specs for other reasons (their rows say why)\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sw := writeFile(t, "s.yaml", "backend: cpu\nsweeps:\n"+c.sweeps)
			args := []string{"--config", sw, "--dry-run"}
			if strings.HasSuffix(c.name, "--devices") {
				args = append(args, "--devices", "0")
			}
			code, _, stderr := runMain(t, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("want %q in:\n%s", w, stderr)
				}
			}
			if c.code == exitOK && strings.Contains(stderr, "nothing would run") {
				t.Errorf("a runnable spec, yet:\n%s", stderr)
			}
		})
	}
}
