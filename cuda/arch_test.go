package cuda

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

// An arch the NVRTC does not know is said as such, with the ones it
// knows; one it knows, or a failure for another reason, is not.
func TestUnknownArch(t *testing.T) {
	known := []int{75, 80, 86, 89, 90}
	const refused = "nvrtc: error: invalid value for --gpu-architecture (-arch)"
	for _, c := range []struct {
		name, arch string
		supported  []int
		log, want  string // want "": no ArchError
	}{
		{"unknown", "sm_100", known, refused, "NVRTC 11.8 does not know the architecture sm_100: it compiles for sm_75, sm_80, sm_86, sm_89, sm_90; pass --arch with one of them"},
		{"known", "sm_90", known, "kernel.cu(3): error: identifier \"x\" is undefined", ""},
		{"known with a suffix", "sm_90a", known, "", ""},
		{"compute_ form", "compute_100", known, "", "does not know the architecture compute_100"},
		{"no list, refused", "sm_100", nil, refused, "is too old to list the ones it knows"},
		{"no list, another error", "sm_100", nil, "error: expected a ;", ""},
		{"not an arch name", "hopper", known, refused, ""},
	} {
		e := unknownArch(c.arch, "11.8", c.supported, c.log)
		switch {
		case c.want == "" && e != nil:
			t.Errorf("%s: ArchError %v", c.name, e)
		case c.want != "" && (e == nil || !strings.Contains(e.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, e, c.want)
		}
	}
}

// With NVRTC here (11.8 knows no sm_100; no NVRTC knows sm_990),
// CheckCompile's error is an ArchError listing what this NVRTC knows.
func TestCheckCompileUnknownArch(t *testing.T) {
	p := profiler.Program{Source: "k", File: "k.cu", Code: `extern "C" __global__ void k(float* y) { y[0] = 1; }`, Entry: "k"}
	if _, err := CheckCompile(p, "sm_80"); err != nil {
		t.Skip("no NVRTC that compiles for sm_80 here: ", err)
	}
	archs := []string{"sm_990"}
	if _, err := CheckCompile(p, "sm_100"); err != nil {
		archs = append(archs, "sm_100")
	}
	for _, arch := range archs {
		_, err := CheckCompile(p, arch)
		var ae *ArchError
		if !errors.As(err, &ae) {
			t.Fatalf("%s: %v, want an ArchError", arch, err)
		}
		if ae.Arch != arch || !slices.Contains(ae.Supported, "sm_80") || slices.Contains(ae.Supported, arch) || !strings.Contains(err.Error(), "does not know the architecture "+arch) {
			t.Errorf("%s: %+v: %v", arch, ae, err)
		}
	}
}
