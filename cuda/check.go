package cuda

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
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
// has a .nv.info.<name> section) and, for the entry, its static shared
// memory (the size of its .nv.shared.<name> section; 0 when it has code
// and no such section). Registers are not read yet: -1.
func cubinFacts(cubin []byte, entry string) (kernels []string, registers, shared int) {
	registers, shared = -1, -1
	f, err := elf.NewFile(bytes.NewReader(withELFVersion(cubin)))
	if err != nil {
		return nil, -1, -1
	}
	defer f.Close()
	hasCode := false
	for _, s := range f.Sections {
		if name, ok := strings.CutPrefix(s.Name, ".nv.info."); ok {
			kernels = append(kernels, name)
		}
		switch s.Name {
		case ".text." + entry:
			hasCode = true
		case ".nv.shared." + entry:
			shared = int(s.Size)
		}
	}
	if hasCode && shared < 0 {
		shared = 0 // a kernel without a shared section declares none
	}
	return kernels, registers, shared
}

// withELFVersion is cubin with its ELF header's e_version set to 1
// (EV_CURRENT) where the compiler wrote another: CUDA 11's NVRTC puts its
// own ABI version there (0x76), which Go's debug/elf refuses, and the
// kernels of such a cubin went unlisted. A copy: cubin is not changed.
func withELFVersion(cubin []byte) []byte {
	const off = 0x14 // e_version, after e_ident (16 bytes), e_type and e_machine
	if len(cubin) < off+4 || string(cubin[:4]) != "\x7fELF" || binary.LittleEndian.Uint32(cubin[off:]) == 1 {
		return cubin
	}
	c := bytes.Clone(cubin)
	binary.LittleEndian.PutUint32(c[off:], 1)
	return c
}
