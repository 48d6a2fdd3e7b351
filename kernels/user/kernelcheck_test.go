package user

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

const scaleCU = `extern "C" __global__ void scale(const T* x, T* y, int N) {}`

// scaleYAML is y = 2·x; enginetest's in-memory backend computes exactly
// that for any kernel (and skips the last element for one named
// scale_broken), so the runner can run these manifests without a GPU.
func scaleYAML(name, knobs, check string) string {
	return fmt.Sprintf(`name: %s
sources: {cuda: k.cu}
dtypes: [f32, bf16]
knobs:
  WG: {values: [%s], default: 64}
dims:
  N: {default: 1000}
buffers:
  - {name: x, dtype: T, shape: [N]}
  - {name: y, dtype: T, shape: [N], out: true, tol: {bf16: {atol: 0.02, rtol: 0.02}}}
dispatches:
  - {entry: scale, grid: ["cdiv(N, WG)"], threads: [WG], args: [x, y, N]}
check: %s
`, name, knobs, check)
}

func TestKernelCheckManifest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"naive/kernel.yaml": scaleYAML("kc_naive", "32, 64", "none"),
		"naive/k.cu":        scaleCU,
		"fast/kernel.yaml":  scaleYAML("kc_fast", "64, 128", "{kernel: ../naive/kernel.yaml}"),
		"fast/k.cu":         scaleCU,
	}
	write := func(extra map[string]string) {
		for n, c := range extra {
			writeFile(t, filepath.Join(dir, n), c)
		}
	}
	write(files)
	f, err := Load(filepath.Join(dir, "fast/kernel.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if f.check.kind() != "kernel" || f.check.kernel.Name() != "kc_naive" {
		t.Fatalf("check %+v", f.check)
	}
	// the check kernel's files are watched and versioned with ours
	if got := strings.Join(f.Files(), " "); !strings.Contains(got, filepath.Join(dir, "naive", "k.cu")) {
		t.Errorf("files %s", got)
	}
	// without a device the check says so
	if _, err := f.Reference(profiler.Spec{}, nil, 1, 1); err == nil || !strings.Contains(err.Error(), "runs on the device") {
		t.Errorf("Reference: %v", err)
	}
	// two manifests that name each other load (the nested check is not loaded)
	write(map[string]string{"naive/kernel.yaml": scaleYAML("kc_naive", "32, 64", "{kernel: ../fast/kernel.yaml}")})
	if _, err := Load(filepath.Join(dir, "fast/kernel.yaml")); err != nil {
		t.Errorf("mutual checks: %v", err)
	}
	for _, c := range []struct {
		name, naive, check, want string
	}{
		{"missing", "", "{kernel: ../nope/kernel.yaml}", "kernel.yaml:13:17: check.kernel: cannot read " + filepath.Join(dir, "nope", "kernel.yaml")},
		{"itself", "", "{kernel: kernel.yaml}", "kernel.yaml is this manifest"},
		{"empty", "", "{kernel: \"\"}", "want the path of another kernel.yaml"},
		{"broken naive", "name: kc_naive\nsourcez: {}\n", "{kernel: ../naive/kernel.yaml}", "the check kernel ../naive/kernel.yaml does not load: " + filepath.Join(dir, "naive", "kernel.yaml") + ":2:1"},
		{"same name", scaleYAML("kc_fast", "64", "none"), "{kernel: ../naive/kernel.yaml}", "has this kernel's name kc_fast"},
		{"no f32", strings.Replace(scaleYAML("kc_naive", "64", "none"), "[f32, bf16]", "[bf16]", 1), "{kernel: ../naive/kernel.yaml}", "does not list f32"},
		{"other dim", strings.ReplaceAll(scaleYAML("kc_naive", "64", "none"), "N", "M"), "{kernel: ../naive/kernel.yaml}", "kc_naive's dim M has no source: give your kernel a dim M, or map one of yours to it"},
		{"mapped dim", strings.ReplaceAll(scaleYAML("kc_naive", "64", "none"), "N", "M"), "{kernel: ../naive/kernel.yaml, map: {N: M}}", ""},
		{"other output", renameY(scaleYAML("kc_naive", "64", "none")), "{kernel: ../naive/kernel.yaml}", "your output y has no output y in kc_naive (its outputs: out)"},
		{"mapped output", renameY(scaleYAML("kc_naive", "64", "none")), "{kernel: ../naive/kernel.yaml, map: {y: out}}", ""},
		{"map of nothing", "", "{kernel: ../naive/kernel.yaml, map: {z: out}}", "z is not one of your buffers or dims"},
		{"two checks", "", "{kernel: ../naive/kernel.yaml, python: ref.py}", "give exactly one of python, against or kernel"},
	} {
		naive := c.naive
		if naive == "" {
			naive = scaleYAML("kc_naive", "32, 64", "none")
		}
		write(map[string]string{"naive/kernel.yaml": naive, "fast/kernel.yaml": scaleYAML("kc_fast", "64, 128", c.check)})
		_, err := Load(filepath.Join(dir, "fast/kernel.yaml"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v\nwant %q", c.name, err, c.want)
		}
	}
}

// renameY names the output out.
func renameY(m string) string {
	return strings.NewReplacer("{name: y,", "{name: out,", "args: [x, y, N]", "args: [x, out, N]").Replace(m)
}

func writeFile(t *testing.T, p, c string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

// DeviceReference runs the other manifest at f32 with our dims, knobs it
// allows and our inputs, and checks our outputs against its.
func TestKernelCheckDeviceReference(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "naive/kernel.yaml"), scaleYAML("kd_naive", "32, 64", "none"))
	writeFile(t, filepath.Join(dir, "naive/k.cu"), scaleCU)
	writeFile(t, filepath.Join(dir, "fast/kernel.yaml"), scaleYAML("kd_fast", "64, 128", "{kernel: ../naive/kernel.yaml}"))
	writeFile(t, filepath.Join(dir, "fast/k.cu"), scaleCU)
	f, err := Load(filepath.Join(dir, "fast/kernel.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: "kd_fast", DType: profiler.BF16, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"N": 10}}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	var asked profiler.Spec
	var gave profiler.Inputs
	runOn := func(o profiler.Family, ospec profiler.Spec, in profiler.Inputs) (map[string][]float64, error) {
		asked, gave = ospec, in
		if o.Name() != "kd_naive" {
			t.Errorf("ran %s", o.Name())
		}
		y := make([]float64, 10)
		for i, v := range in["x"] {
			y[i] = 2 * float64(v)
		}
		return map[string][]float64{"y": y}, nil
	}
	ref, err := f.DeviceReference(s, profiler.Inputs{"x": x}, 4, 1, runOn)
	if err != nil {
		t.Fatal(err)
	}
	if asked.DType != profiler.F32 || asked.Dims["N"] != 10 || asked.Knobs["WG"] != 64 || len(gave["x"]) != 10 {
		t.Errorf("asked %v with %v", asked, gave)
	}
	if len(ref.Checks) != 1 || ref.Checks[0].Buffer != "y" || len(ref.Checks[0].Index) != 10 || ref.Checks[0].Want[0] != 2 || ref.Checks[0].Tol == nil || ref.Checks[0].Tol.ATol != 0.02 {
		t.Errorf("ref %+v", ref)
	}
	if !strings.Contains(ref.Rows, "against kd_naive at f32") || !strings.Contains(ref.Rows, "WG=128 is not allowed there") {
		t.Errorf("rows %q", ref.Rows)
	}
	// the device's refusal reaches the row, saying what to do
	_, err = f.DeviceReference(s, profiler.Inputs{"x": x}, 4, 1, func(profiler.Family, profiler.Spec, profiler.Inputs) (map[string][]float64, error) {
		return nil, fmt.Errorf("the cpu backend: %w", profiler.ErrCannotRun)
	})
	if err == nil || !errors.Is(err, profiler.ErrCannotRun) || !strings.Contains(err.Error(), "check: kernel kd_naive") || !strings.Contains(err.Error(), "needs a GPU backend") {
		t.Errorf("cannot run: %v", err)
	}
	// a dim of the check kernel that none of the spec's values gives
	noN := profiler.Spec{Kernel: "kd_fast", DType: profiler.BF16, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{}}
	_, err = f.DeviceReference(noN, profiler.Inputs{"x": x}, 4, 1, runOn)
	if err == nil || !strings.Contains(err.Error(), "check: kernel kd_naive: its dim N maps to N, which is not one of your dims or knobs") {
		t.Errorf("missing dim: %v", err)
	}
	// a wrong shape back is an error, not a pass
	_, err = f.DeviceReference(s, profiler.Inputs{"x": x}, 4, 1, func(profiler.Family, profiler.Spec, profiler.Inputs) (map[string][]float64, error) {
		return map[string][]float64{"y": make([]float64, 9)}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "has 9 elements, your y has 10") {
		t.Errorf("wrong shape: %v", err)
	}
}

// The whole loop on the engine's in-memory backend: a user kernel checked
// against another manifest passes, and a broken one is a mismatch.
func TestKernelCheckRunner(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "naive/kernel.yaml"), scaleYAML("kr_naive", "32, 64", "none"))
	writeFile(t, filepath.Join(dir, "naive/k.cu"), scaleCU)
	for _, name := range []string{"kr_fast", "scale_broken"} {
		writeFile(t, filepath.Join(dir, name, "kernel.yaml"), scaleYAML(name, "64, 128", "{kernel: ../naive/kernel.yaml}"))
		writeFile(t, filepath.Join(dir, name, "k.cu"), scaleCU)
		if _, err := Register(filepath.Join(dir, name, "kernel.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	r := run.NewRunner(&enginetest.MemBackend{})
	res := r.Run(context.Background(), profiler.Spec{Kernel: "kr_fast", DType: profiler.BF16, Dims: map[string]int{"N": 300}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusOK || !strings.Contains(res.Verdict.Rows, "against kr_naive at f32") || res.Verdict.Checked != 300 {
		t.Errorf("kr_fast: %s %s %+v", res.Status, res.Error, res.Verdict)
	}
	res = r.Run(context.Background(), profiler.Spec{Kernel: "scale_broken", DType: profiler.F32, Dims: map[string]int{"N": 300}}, enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusMismatch || !strings.Contains(res.Error, "y[299]") {
		t.Errorf("scale_broken: %s %s", res.Status, res.Error)
	}
}
