package user

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

var emuDev = metal.DeviceInfo(metal.RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024, HasTimestampSet: true, StageBoundary: true})

// twin copies an example's folder to a temporary one, renaming its kernel
// and rewriting one file with edit (a broken twin when edit breaks it).
func twin(t *testing.T, example, name, file string, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(example)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(example, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if e.Name() == ManifestName {
			s = strings.Replace(s, "\nname: ", "\nname: "+name+"_", 1)
		}
		if e.Name() == file {
			if s2 := edit(s); s2 != s {
				s = s2
			} else {
				t.Fatalf("test setup: the edit changes nothing in %s", file)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, ManifestName)
}

// The two Metal examples written for real-world sources run through the
// MSL emulation and the real Runner against their Python references:
// examples/mlx_body (an MLX-style body: mltop writes the signature, fills
// inp_shape) and examples/metal_constants (function constants for a bool
// flag and an int knob, a [[host_name]] template whose type is the dtype,
// rows and cols one `constant int&` each). Each one's broken twin (one
// constant changed) is a mismatch.
func TestMetalExamplesOnEmulator(t *testing.T) {
	usePython(t)
	eb := mslemu.New(t, "../../metal/testdata/mslemu", emuDev)
	opt := mslemu.Options()
	opt.MaxRows = 64
	keep := func(s string) string { return s + "\n" }
	cases := []struct {
		name, example, file string
		edit                func(string) string
		spec                profiler.Spec
		want                profiler.Status
	}{
		{"gelu_f32_ragged", "mlx_body", "gelu_body.metal", keep,
			profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 7, "cols": 45}}, profiler.StatusOK},
		{"gelu_f16", "mlx_body", "gelu_body.metal", keep,
			profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 4, "cols": 64}}, profiler.StatusOK},
		{"gelu_broken", "mlx_body", "gelu_body.metal", func(s string) string { return strings.Replace(s, "0.044715f", "0.05f", 1) },
			profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"WG": 64}, Dims: map[string]int{"rows": 7, "cols": 45}}, profiler.StatusMismatch},
		{"bias_relu_unroll4_ragged", "metal_constants", "bias_act.metal", keep,
			profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"UNROLL": 4, "WG": 32}, Flags: map[string]bool{"relu": true}, Dims: map[string]int{"rows": 5, "cols": 201}}, profiler.StatusOK},
		{"bias_norelu_unroll1_f16", "metal_constants", "bias_act.metal", keep,
			profiler.Spec{DType: profiler.F16, Knobs: map[string]int{"UNROLL": 1, "WG": 64}, Flags: map[string]bool{"relu": false}, Dims: map[string]int{"rows": 3, "cols": 100}}, profiler.StatusOK},
		{"bias_unroll_left_unset", "metal_constants", ManifestName, func(s string) string { return strings.Replace(s, "  UNROLL: UNROLL\n", "", 1) },
			profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"UNROLL": 1, "WG": 32}, Flags: map[string]bool{"relu": true}, Dims: map[string]int{"rows": 3, "cols": 129}}, profiler.StatusOK},
		{"bias_broken", "metal_constants", "bias_act.metal", func(s string) string { return strings.Replace(s, "u < unroll", "u < unroll - 1", 1) },
			profiler.Spec{DType: profiler.F32, Knobs: map[string]int{"UNROLL": 2, "WG": 32}, Flags: map[string]bool{"relu": true}, Dims: map[string]int{"rows": 5, "cols": 201}}, profiler.StatusMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Load(twin(t, "../../examples/"+c.example, c.name, c.file, c.edit))
			if err != nil {
				t.Fatal(err)
			}
			if err := Install(f); err != nil {
				t.Fatal(err)
			}
			s := c.spec
			s.Kernel = f.Name()
			eb.NativeBF16 = false
			res := run.NewRunner(eb).Run(context.Background(), s.WithDefaults(f.Schema()), opt, nil)
			if res.Status != c.want {
				t.Fatalf("status %s, want %s: %s %+v", res.Status, c.want, res.Error, res.Verdict)
			}
		})
	}
}
