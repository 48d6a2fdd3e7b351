package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// checkFolder writes a folder with one good manifest (test_good_dir_k; the
// test_ prefix keeps it out of list's golden) and,
// when broken, one whose dispatch names an entry the source lacks.
func checkFolder(t *testing.T, broken bool) string {
	files := map[string]string{"good/kernel.yaml": usertest.Manifest("test_good_dir_k"), "good/k.cu": usertest.Source}
	if broken {
		files["bad/kernel.yaml"] = strings.Replace(usertest.Manifest("test_bad_dir_k"), "entry: k,", "entry: k_fwd,", 1)
		files["bad/k.cu"] = usertest.Source
	}
	return filepath.Dir(usertest.Write(t, files))
}

// mltop check: exit 0 clean, 2 when a manifest is broken, every manifest
// reported either way.
func TestCheckCommand(t *testing.T) {
	t.Setenv(pyref.PythonEnv, filepath.Join(t.TempDir(), "no-python"))
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	code, out, errs := runCLI(t, "check", checkFolder(t, false))
	if code != 0 || !strings.Contains(out, "(test_good_dir_k)") || !strings.Contains(out, "=> ok") || !strings.Contains(out, notRunNote) {
		t.Errorf("clean folder: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "check", "--quiet", checkFolder(t, true))
	if code != 2 || !strings.Contains(out, "=> ok") || !strings.Contains(out, `has no kernel "k_fwd"`) || !strings.Contains(errs, "a manifest does not load") {
		t.Errorf("broken folder: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "note ") || strings.Contains(out, notRunNote) {
		t.Errorf("--quiet printed notes:\n%s", out)
	}
	// --arch is checked even where no NVRTC would compile for it
	for _, arch := range []string{"sm_xx", "90", "sm90", "sm_"} {
		if code, out, errs := runCLI(t, "check", "--arch", arch, checkFolder(t, false)); code != 2 || !strings.Contains(errs, `--arch "`+arch+`": give an NVRTC architecture such as sm_80`) || out != "" {
			t.Errorf("--arch %s: exit %d\n%s\n%s", arch, code, out, errs)
		}
	}
	for _, arch := range []string{"sm_80", "sm_90a", "compute_90", "sm_100"} {
		if code, out, errs := runCLI(t, "check", "--arch", arch, checkFolder(t, false)); code != 0 {
			t.Errorf("--arch %s: exit %d\n%s\n%s", arch, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "check"); code != 2 || !strings.Contains(errs, "check needs a kernel.yaml") {
		t.Errorf("no path: %d %s", code, errs)
	}
	// a source given for its manifest: said so, with the `mltop new` line, exit 2
	src := filepath.Join(filepath.Dir(usertest.Write(t, map[string]string{"cu/saxpy_softmax.cu": usertest.Source})), "cu", "saxpy_softmax.cu")
	code, out, errs = runCLI(t, "check", src)
	if want := "this is a CUDA source, not a manifest: give its kernel.yaml, or write one with `mltop new saxpy_softmax --from " + src + "`"; code != 2 || !strings.Contains(out, want) || strings.Contains(out, "want a mapping") {
		t.Errorf("a .cu file: exit %d\n%s\n%s\nwant %q", code, out, errs, want)
	}
}

// mltop list --kernel DIR: the good manifest is listed, the broken one's
// error is shown, exit 2.
func TestListFolderWithABrokenManifest(t *testing.T) {
	code, out, errs := runCLI(t, "list", "--kernel", checkFolder(t, true))
	if _, err := profiler.Lookup("test_good_dir_k"); err != nil {
		t.Errorf("the good manifest is not registered: %v", err)
	}
	if code != 2 || strings.Contains(out, "good/kernel.yaml does not load") || !strings.Contains(out, "Manifests that do not load (1") ||
		!strings.Contains(out, `bad/kernel.yaml:14:`) || !strings.Contains(out, "Python for references (MLTOP_PYTHON): ") || !strings.Contains(out, "CUDA toolkit for user kernels:\n  NVRTC: ") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// mltop new refuses a built-in family's name.
func TestNewRefusesBuiltinName(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runCLI(t, "new", "attn_fwd", "--from", filepath.Join(dir, "k.cu"), "--entry", "k")
	if code != 2 || !strings.Contains(errs, "attn_fwd is the name of a built-in family") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// `threads: [2048]`: check exits 2, the error names the value, the limit
// and what to do; a knob value listed over 1024 (the default within it)
// is a warning and exits 0.
func TestCheckThreadsOverTheHardLimit(t *testing.T) {
	t.Setenv(pyref.PythonEnv, filepath.Join(t.TempDir(), "no-python"))
	t.Setenv("MLTOP_NVRTC", filepath.Join(t.TempDir(), "no-nvrtc.so"))
	for _, c := range []struct {
		threads string
		code    int
		want    string
	}{
		{"[2048]", 2, "error   [plan] "},
		{`["WG * 16"]`, 0, "knob values WG=128 (listed in values:) ask more than 1024 threads per group"},
	} {
		m := strings.Replace(usertest.Manifest("test_threads_k"), "threads: [WG]", "threads: "+c.threads, 1)
		dir := filepath.Dir(usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": usertest.Source}))
		code, out, errs := runCLI(t, "check", dir)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("threads: %s: exit %d, want %d and %q:\n%s\n%s", c.threads, code, c.code, c.want, out, errs)
		}
		if c.code == 2 && (!strings.Contains(out, "2048 threads per group (threads [2048 1 1]); no CUDA GPU runs more than 1024: lower the threads expression") ||
			!strings.Contains(errs, "its default spec runs on no GPU")) {
			t.Errorf("threads: %s:\n%s\n%s", c.threads, out, errs)
		}
	}
}
