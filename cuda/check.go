package cuda

import (
	"bytes"
	"debug/elf"
	"strings"
)

// DefaultCheckArch is what CheckCompile compiles for when no arch is given:
// Hopper, the GPU most users of the CUDA backend run on.
const DefaultCheckArch = "sm_90"

// CompileReport is what CheckCompile learnt from NVRTC.
type CompileReport struct {
	Arch     string   // the sm_XY compiled for
	Compiler string   // "NVRTC 13.0 from <path>"
	Options  []string // the NVRTC options, as the backend passes them
	Log      string   // NVRTC's log (warnings), file:line form
	Entry    string   // the entry as written
	Lowered  string   // its lowered (mangled) name; the plain name for NVRTC without name expressions
	Kernels  []string // every kernel in the cubin, by lowered name

	// From the cubin, for the entry; -1 when the cubin does not say.
	Registers    int
	StaticShared int
	CubinBytes   int
}

// checkArch is the arch CheckCompile compiles for.
func checkArch(arch string) string {
	if arch = strings.TrimSpace(arch); arch == "" {
		return DefaultCheckArch
	}
	return arch
}

// cubinFacts reads, from a cubin (an ELF file), the kernels it holds (each
// has a .nv.info.<name> section) and, for the entry, its registers (the
// top byte of its .text.<name> section's info) and static shared memory
// (the size of its .nv.shared.<name> section). Unknown values are -1.
func cubinFacts(cubin []byte, entry string) (kernels []string, registers, shared int) {
	registers, shared = -1, -1
	f, err := elf.NewFile(bytes.NewReader(cubin))
	if err != nil {
		return nil, -1, -1
	}
	defer f.Close()
	for _, s := range f.Sections {
		if name, ok := strings.CutPrefix(s.Name, ".nv.info."); ok {
			kernels = append(kernels, name)
		}
		switch s.Name {
		case ".text." + entry:
			registers = int(s.Info >> 24)
		case ".nv.shared." + entry:
			shared = int(s.Size)
		}
	}
	if registers >= 0 && shared < 0 {
		shared = 0 // a kernel without a shared section declares none
	}
	return kernels, registers, shared
}
