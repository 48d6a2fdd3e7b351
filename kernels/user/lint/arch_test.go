package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// --arch naming an architecture the NVRTC here does not know is bad input
// (exit 2), said once whatever the number of programs, with what NVRTC
// knows; any other compile error stays a failed check (exit 1).
func TestArchUnknownToNVRTC(t *testing.T) {
	m := strings.Replace(usertest.Manifest("arch_k"), "dtypes: [f32]", "dtypes: [f32, f16]", 1)
	path := usertest.Write(t, map[string]string{"k.cu": usertest.Source, "kernel.yaml": m})
	for _, c := range []struct {
		name string
		err  error
		code int
	}{
		{"unknown arch", &cuda.ArchError{Arch: "sm_100", Version: "11.8", Supported: []string{"sm_80", "sm_90"}}, 2},
		{"a source error", fmt.Errorf("NVRTC could not compile k.cu for sm_90: k.cu(1): error: expected a ;"), 1},
	} {
		opt := noTools(t)
		calls := 0
		opt.Arch = "sm_100"
		opt.CompileCUDA = func(p profiler.Program, arch string) (cuda.CompileReport, error) {
			calls++
			return cuda.CompileReport{Arch: arch}, fmt.Errorf("NVRTC could not compile k.cu for %s: %w", arch, c.err)
		}
		rep := Check(path, opt)
		r := rep.Manifests[0]
		text := findingsOf(r) + r.Verdict()
		if rep.ExitCode() != c.code || r.BadArch != (c.code == 2) {
			t.Errorf("%s: exit %d, BadArch %v, want exit %d:\n%s", c.name, rep.ExitCode(), r.BadArch, c.code, text)
		}
		if c.code == 2 {
			mustContain(t, c.name, text, "error   [compile] ", "CUDA: NVRTC 11.8 does not know the architecture sm_100: it compiles for sm_80, sm_90", "not compiled: this NVRTC does not know the architecture asked")
			if calls != 1 || r.Count(Error) != 1 {
				t.Errorf("%s: %d compiles, %d errors, want 1 each:\n%s", c.name, calls, r.Count(Error), text)
			}
		}
	}
}
