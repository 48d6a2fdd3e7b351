package user

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// scratchSource is k with a block counter S and per-block partials P.
const scratchSource = `extern "C" __global__ void k(const T* X, T* Y, unsigned int* S, float* P, int rows, int cols) {}`

// scratchManifest is the test manifest with the scratch buffer lines
// after Y and S and P bound to k.
func scratchManifest(t *testing.T, lines string) string {
	t.Helper()
	y := withBuffers(t, xLine, yLine+"\n"+lines)
	const args = "args: [X, Y, rows, cols]"
	if !strings.Contains(y, args) {
		t.Fatal("test setup: the args moved")
	}
	return strings.Replace(y, args, "args: [X, Y, S, P, rows, cols]", 1)
}

func loadScratch(t *testing.T, lines string) (*Family, error) {
	t.Helper()
	return Load(usertest.Write(t, map[string]string{"kernel.yaml": scratchManifest(t, lines), "k.cu": scratchSource}))
}

// Accepted scratch buffers: their init (zeros unless given), role
// scratch_reset, never compared nor sent to the reference, left out of
// the default bytes model but in the memory a run needs.
func TestScratchBuffersPlan(t *testing.T) {
	for _, c := range []struct {
		name, lines string
		wantInit    map[string]profiler.InitKind
	}{
		{"default zeros", "  - {name: S, dtype: i32, shape: [1], scratch: true}\n  - {name: P, dtype: f32, shape: [rows], scratch: true}",
			map[string]profiler.InitKind{"S": profiler.InitZero, "P": profiler.InitZero}},
		{"ones and poison", "  - {name: S, dtype: i32, shape: [1], scratch: true, init: ones}\n  - {name: P, dtype: f32, shape: [rows], scratch: true, init: poison}",
			map[string]profiler.InitKind{"S": profiler.InitOnes, "P": profiler.InitPoison}},
		{"normal", "  - {name: S, dtype: i32, shape: [1], scratch: true, init: zeros}\n  - {name: P, dtype: f32, shape: [rows], scratch: true, init: \"normal(0, 1)\"}",
			map[string]profiler.InitKind{"S": profiler.InitZero, "P": profiler.InitNormal}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := loadScratch(t, c.lines)
			if err != nil {
				t.Fatal(err)
			}
			s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
			p, err := f.Plan(s, cudaDev)
			if err != nil {
				t.Fatal(err)
			}
			var scratchBytes int64
			for _, b := range p.Buffers {
				want, isScratch := c.wantInit[b.Name]
				if !isScratch {
					if b.Role == profiler.ScratchReset {
						t.Errorf("%s has role %s", b.Name, b.Role)
					}
					continue
				}
				scratchBytes += b.Bytes()
				if b.Role != profiler.ScratchReset || b.Init != want || b.Role.Reads() || b.Role.Checked() || !b.Role.Restored() {
					t.Errorf("%s: role %s init %s, want scratch_reset %s", b.Name, b.Role, b.Init, want)
				}
			}
			xy := float64(2 * 8 * 16 * 4) // X and Y, f32 [rows, cols]
			if p.Bytes != xy {
				t.Errorf("bytes %g, want %g (X and Y only)", p.Bytes, xy)
			}
			if p.MemoryBytes() != int64(xy)+scratchBytes || scratchBytes != 4+8*4 {
				t.Errorf("memory %d, want %g + %d (the scratch counts there)", p.MemoryBytes(), xy, scratchBytes)
			}
			if !strings.Contains(strings.Join(p.Notes, "\n"), "every buffer counted once (scratch S, P not counted)") {
				t.Errorf("notes %q: want the bytes note to name the scratch left out", p.Notes)
			}
			for _, b := range f.bufs {
				if _, isScratch := c.wantInit[b.name]; isScratch && (b.reads() || b.checked()) {
					t.Errorf("%s: reads %t checked %t: the reference must neither get nor return it", b.name, b.reads(), b.checked())
				}
			}
		})
	}
}

// Keys that only mean something for a compared buffer are refused on a
// scratch buffer, naming the key and what to do; a manifest whose only
// written buffer is scratch still has no output.
func TestBadScratchBuffers(t *testing.T) {
	const s = "  - {name: S, dtype: i32, shape: [1], scratch: true"
	const p = "\n  - {name: P, dtype: f32, shape: [rows], scratch: true}"
	for _, c := range []struct {
		name, lines string
		want        []string
	}{
		{"out", s + ", out: true}" + p, []string{"buffers[S].out", "S is scratch", "never compared", "keep one: drop `scratch: true` if the reference should check S, else drop `out: true`"}},
		{"inout", s + ", inout: true, init: zeros}" + p, []string{"buffers[S].inout", "S is scratch and inout", "keep one"}},
		{"tol", s + ", tol: {atol: 1}}" + p, []string{"buffers[S].tol", "never compared: drop tol"}},
		{"terms", s + ", terms: cols}" + p, []string{"buffers[S].terms", "drop terms"}},
		{"magnitude", s + ", magnitude: want}" + p, []string{"buffers[S].magnitude", "drop magnitude"}},
		{"accumulate", s + ", accumulate: T}" + p, []string{"buffers[S].accumulate", "drop accumulate"}},
		{"bad init", s + ", init: \"normal(0)\"}" + p, []string{"buffers[S].init", "normal takes 2 arguments"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadScratch(t, c.lines)
			errorSays(t, err, c.want)
		})
	}
	t.Run("scratch is not an output", func(t *testing.T) {
		y := strings.Replace(scratchManifest(t, s+"}"+p), yLine, "  - {name: Y, dtype: T, shape: [rows, cols], scratch: true}", 1)
		_, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": scratchSource}))
		if err == nil || !strings.Contains(err.Error(), "no output") {
			t.Fatalf("error %v, want no output", err)
		}
	})
}

// A check kernel gets the inputs but never the scratch, even one the
// runner made values for (init: ones) and one it has a buffer of the
// same name for.
func TestScratchNotSentToCheckKernel(t *testing.T) {
	dir := t.TempDir()
	naive := strings.Replace(scaleYAML("ks_naive", "32, 64", "none"),
		"  - {name: x, dtype: T, shape: [N]}", "  - {name: x, dtype: T, shape: [N]}\n  - {name: S, dtype: i32, shape: [1], init: zeros}", 1)
	writeFile(t, filepath.Join(dir, "naive/kernel.yaml"), strings.Replace(naive, "args: [x, y, N]", "args: [x, y, N, S]", 1))
	writeFile(t, filepath.Join(dir, "naive/k.cu"), `extern "C" __global__ void scale(const T* x, T* y, int N, const int* S) {}`)
	fast := strings.Replace(scaleYAML("ks_fast", "64, 128", "{kernel: ../naive/kernel.yaml}"),
		"  - {name: x, dtype: T, shape: [N]}", "  - {name: x, dtype: T, shape: [N]}\n  - {name: S, dtype: i32, shape: [1], scratch: true, init: ones}", 1)
	fast = strings.Replace(fast, "args: [x, y, N]", "args: [x, y, N, S]", 1)
	writeFile(t, filepath.Join(dir, "fast/kernel.yaml"), fast)
	writeFile(t, filepath.Join(dir, "fast/k.cu"), `extern "C" __global__ void scale(const T* x, T* y, int N, unsigned* S) {}`)
	f, err := Load(filepath.Join(dir, "fast/kernel.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: "ks_fast", DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"N": 3}}
	var gave profiler.Inputs
	runOn := func(o profiler.Family, ospec profiler.Spec, in profiler.Inputs) (map[string][]float64, error) {
		gave = in
		return map[string][]float64{"y": {2, 4, 6}}, nil
	}
	if _, err := f.DeviceReference(s, profiler.Inputs{"x": {1, 2, 3}, "S": {1}}, 4, 1, runOn); err != nil {
		t.Fatal(err)
	}
	if _, ok := gave["S"]; ok || len(gave["x"]) != 3 {
		t.Errorf("the check kernel got %v: want x and not the scratch S", gave)
	}
}

// ref.py gets the inputs but not the scratch buffers, and one it returns
// anyway is named as ignored by mltop check's reference step. Skips
// without NumPy.
func TestScratchNotSentToPython(t *testing.T) {
	usePython(t)
	const ref = `def reference(inputs, dims):
    assert sorted(inputs) == ["X"], sorted(inputs)
    return {"Y": inputs["X"], "S": inputs["X"][:1, :1]}
`
	y := strings.Replace(scratchManifest(t, "  - {name: S, dtype: i32, shape: [1], scratch: true, init: ones}\n  - {name: P, dtype: f32, shape: [rows], scratch: true, init: \"normal(0, 1)\"}"),
		"check: none", "check: {python: ref.py}", 1)
	f, err := Load(usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": scratchSource, "ref.py": ref}))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.TinySpec(profiler.F32)
	if err != nil {
		t.Fatal(err)
	}
	_, problems, err := f.CheckReference(context.Background(), "", s)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Error || !strings.Contains(problems[0].Msg, "returned S, a scratch buffer, which is never compared") {
		t.Errorf("problems %+v: want one warning naming the scratch S", problems)
	}
}

// The warning about a large Python exchange counts what Python receives
// and returns: a large scratch workspace is neither.
func TestScratchNotCountedInPythonBytes(t *testing.T) {
	f, err := loadScratch(t, "  - {name: S, dtype: i32, shape: [1], scratch: true}\n  - {name: P, dtype: f32, shape: [\"rows * cols * 1024\"], scratch: true}")
	if err != nil {
		t.Fatal(err)
	}
	s := profiler.Spec{Kernel: f.Name(), DType: profiler.F32}.WithDefaults(f.Schema())
	e, err := f.env(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.pyCall(e, s.DType, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.pythonBytes(), int64(2*8*16*8); got != want {
		t.Errorf("python exchange %d B, want %d (X sent and Y returned, as float64; no scratch)", got, want)
	}
}
