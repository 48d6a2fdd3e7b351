//go:build linux

package cuda

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// CheckCompile compiles p with NVRTC alone (no driver, no GPU), with the
// options, include directories and entry name expression the backend would
// use, for arch (DefaultCheckArch when ""). The report carries NVRTC's log
// also when the compile fails. For `mltop check` on a machine with the CUDA
// toolkit and no GPU.
func CheckCompile(p profiler.Program, arch string) (CompileReport, error) {
	r := CompileReport{Arch: checkArch(arch), Entry: p.Entry, Registers: -1, StaticShared: -1, ReservedShared: -1}
	nv, err := loadNVRTC()
	if err != nil {
		return r, err
	}
	_, r.Compiler = nvrtcLocation()
	if p.Code != "" { // a user program: it gets the toolkit's headers
		_, searched := searchToolkit()
		r.Headers = includeSummary(searched)
	}
	builtin, err := shaders.Headers("cuda")
	if err != nil {
		return r, fmt.Errorf("reading the embedded CUDA headers: %w", err)
	}
	src, name, hdrs, err := programSource(p, builtin)
	if err != nil {
		return r, err
	}
	r.Options = CompileOptions(p, r.Arch)
	expr := entryExpression(p, nv.namesEntries())
	c, err := compileProgram(nv, src, name, hdrs, r.Options, p.Entry, expr)
	r.Log = c.log
	if err != nil {
		return r, fmt.Errorf("NVRTC could not compile %s for %s: %w", name, r.Arch, err)
	}
	r.Lowered = c.lowered
	if r.Lowered == "" {
		r.Lowered = p.Entry
	}
	r.CubinBytes = len(c.cubin)
	facts := readCubin(c.cubin, r.Lowered, r.Arch)
	r.Kernels, r.Registers, r.StaticShared, r.ReservedShared = facts.kernels, facts.registers, facts.shared, facts.reserved
	return r, nil
}
