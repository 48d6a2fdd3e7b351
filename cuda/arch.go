package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// ArchError is a compile for an architecture the NVRTC in use does not
// know (--arch sm_100 with NVRTC 11.8): bad input, not a fault of the
// source.
type ArchError struct {
	Arch    string // as asked: "sm_100"
	Version string // the NVRTC's: "11.8"
	// Supported are the architectures it compiles for, sm_XY
	// (nvrtcGetSupportedArchs, NVRTC 11.2 on); nil when it cannot list them.
	Supported []string
}

func (e *ArchError) Error() string {
	if len(e.Supported) == 0 {
		return fmt.Sprintf("NVRTC %s does not know the architecture %s (it rejects --gpu-architecture=%s, and is too old to list the ones it knows): pass --arch with an older sm_XY, or use a newer NVRTC (MLTOP_NVRTC)",
			e.Version, e.Arch, e.Arch)
	}
	return fmt.Sprintf("NVRTC %s does not know the architecture %s: it compiles for %s; pass --arch with one of them, or use a newer NVRTC (MLTOP_NVRTC)",
		e.Version, e.Arch, strings.Join(e.Supported, ", "))
}

// archNumber is the compute capability an arch names, as NVRTC numbers
// it: "sm_90a" and "compute_90" are 90; ok is false for a name of no
// such form.
func archNumber(arch string) (int, bool) {
	s, found := strings.CutPrefix(arch, "sm_")
	if !found {
		if s, found = strings.CutPrefix(arch, "compute_"); !found {
			return 0, false
		}
	}
	s = strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyz")
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// unknownArch is the ArchError of a compile for arch that failed, given
// what this NVRTC is (version) and knows (supported, as NVRTC numbers
// them; nil when it cannot list them) and its log; nil when the arch is
// not the cause.
func unknownArch(arch, version string, supported []int, log string) *ArchError {
	n, ok := archNumber(arch)
	if !ok {
		return nil
	}
	e := &ArchError{Arch: arch, Version: version}
	if supported == nil {
		// no list: the log says whether the option was refused
		if !strings.Contains(log, "--gpu-architecture") {
			return nil
		}
		return e
	}
	for _, s := range supported {
		if s == n {
			return nil
		}
		e.Supported = append(e.Supported, fmt.Sprintf("sm_%d", s))
	}
	return e
}
