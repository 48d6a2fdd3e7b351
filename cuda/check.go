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
	Headers  string   // where the toolkit's headers came from: "toolkit headers from /usr/local/cuda/include"
	Options  []string // the NVRTC options, as the backend passes them
	Log      string   // NVRTC's log (warnings), file:line form
	Entry    string   // the entry as written
	Lowered  string   // its lowered (mangled) name; the plain name for NVRTC without name expressions
	Kernels  []string // every kernel in the cubin, by lowered name

	// From the cubin, for the entry; -1 when the cubin does not say.
	Registers int
	// StaticShared is the entry's static shared memory: the bytes of its
	// __shared__ arrays, as the source declares them.
	StaticShared int
	// ReservedShared is the shared memory the cubin sets aside for the
	// system in each block of the entry, apart from StaticShared (1 KiB
	// from sm_90; 0 when the cubin reserves none, as before sm_90, where
	// the driver adds its own at launch).
	ReservedShared int
	CubinBytes     int
}

// checkArch is the arch CheckCompile compiles for.
func checkArch(arch string) string {
	if arch = strings.TrimSpace(arch); arch == "" {
		return DefaultCheckArch
	}
	return arch
}

// cubinFacts is what a cubin says of its kernels and of one entry.
type cubinFacts struct {
	kernels   []string // every kernel, by lowered name
	registers int      // the entry's registers; -1: not read yet
	// shared is the entry's static shared memory as the source declares
	// it (its __shared__ arrays), without what the compiler reserves for
	// the system; reserved is that part. -1 both when the cubin does not say.
	shared, reserved int
}

// systemReservedShared is the shared memory CUDA reserves for the system
// in every block from sm_80 (the device's reservedSharedMemPerBlock).
// From sm_90 the compiler may place it in the kernel's own shared window,
// ahead of the user's arrays.
const systemReservedShared = 1024

// readCubin reads, from a cubin (an ELF file) compiled for arch, the
// kernels it holds (each has a .nv.info.<name> section) and the entry's
// static shared memory: the size of its .nv.shared.<name> section (0 when
// it has code and no such section), less the system's reserved part that
// section holds (reservedInWindow).
func readCubin(cubin []byte, entry, arch string) cubinFacts {
	facts := cubinFacts{registers: -1, shared: -1, reserved: -1}
	f, err := elf.NewFile(bytes.NewReader(withELFVersion(cubin)))
	if err != nil {
		return facts
	}
	defer f.Close()
	hasCode, window, reservedSection := false, -1, -1
	for _, s := range f.Sections {
		if name, ok := strings.CutPrefix(s.Name, ".nv.info."); ok {
			facts.kernels = append(facts.kernels, name)
		}
		switch {
		case s.Name == ".text."+entry:
			hasCode = true
		case s.Name == ".nv.shared."+entry:
			window = int(s.Size)
		case strings.HasPrefix(s.Name, ".nv.shared.reserved."):
			reservedSection = max(reservedSection, int(s.Size))
		}
	}
	if window < 0 && !hasCode {
		return facts
	}
	window = max(window, 0) // a kernel without a shared section declares none
	facts.reserved = reservedInWindow(window, reservedSection, arch)
	facts.shared = window - facts.reserved
	if reservedSection > 0 {
		facts.reserved = reservedSection
	}
	return facts
}

// reservedInWindow is the part of an entry's shared section (window bytes)
// that the compiler reserved for the system rather than for the user's
// arrays. A toolkit that keeps the reserved region in a section of its own
// (.nv.shared.reserved.N of some size, reservedSection > 0) leaves the
// entry's section to the user's arrays; NVRTC 13 writes an empty
// .nv.shared.reserved.0 and still puts the KiB in the entry's section (on
// an H200: 1024 B for a kernel with no arrays, 1024 + 1088 for 1088 B of
// them, while the driver reports the arrays alone). Without one, a compiler for sm_90 and later (NVRTC
// 11.8) puts the system's 1 KiB at the start of the entry's section, the
// user's arrays after it: one __shared__ unsigned[16] is a 1088 B section
// at sm_90 and a 64 B one at sm_80.
func reservedInWindow(window, reservedSection int, arch string) int {
	if reservedSection > 0 || smVersion(arch) < 90 || window < systemReservedShared {
		return 0
	}
	return systemReservedShared
}

// smVersion is the number of an arch name (sm_90a → 90); 0 when it has none.
func smVersion(arch string) int {
	_, digits, ok := strings.Cut(arch, "_")
	if !ok {
		return 0
	}
	n := 0
	for _, r := range digits {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
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

// userStaticShared is the static shared memory of the user's arrays, given
// the driver's figure and the cubin's facts: where the driver counts the
// system's part that the compiler put in the kernel's own shared section
// (sm_90, see reservedInWindow), it is taken off, so that the launch's
// dynamic shared memory (dynamicShared), the TGM budget and the occupancy
// (which adds the reservation itself) count only what the user declared.
func userStaticShared(driver int, f cubinFacts) int {
	if f.shared >= 0 && f.reserved > 0 && driver == f.shared+f.reserved {
		return f.shared
	}
	return driver
}
