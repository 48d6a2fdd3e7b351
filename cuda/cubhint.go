package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A source written for one CUB often fails to compile with another: CUB 2
// added API that CUB 1.x lacks, and CUB 2 and CCCL 3 removed some of CUB
// 1's (cub::Max, cub::Sum). NVRTC's error then only says that namespace
// "cub" has no member X, so a failed compile whose errors name CUB ends
// with a hint naming the CUB its include path holds.

// CUBFound is the CUB an include path holds.
type CUBFound struct {
	Version string // "1.17.2", "3.3.0"; "" when no cub/version.cuh was found
	File    string // the cub/version.cuh read
}

// cubVersionDefine reads `#define CUB_VERSION 101702` (MMMmmmpp).
var cubVersionDefine = regexp.MustCompile(`(?m)^\s*#\s*define\s+CUB_VERSION\s+(\d+)\b`)

// cubError finds the error lines of a rewritten NVRTC log that concern
// CUB: they name cub:: or namespace "cub", or sit in one of CUB's headers.
var cubError = regexp.MustCompile(`(?m)^(?:[^\s:][^:\n]*/cub/[^:\n]*:\d+: (?:catastrophic error|error)\b.*|[^\s:][^:\n]*:\d+: (?:catastrophic error|error)\b.*(?:\bcub::|namespace "cub").*)$`)

// parseCUBVersion reads CUB_VERSION from the text of cub/version.cuh as
// major.minor.subminor.
func parseCUBVersion(text string) (string, bool) {
	m := cubVersionDefine.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%d.%d.%d", v/100000, v/100%1000, v%100), true
}

// findCUB reads the cub/version.cuh NVRTC would include: from the
// in-memory headers, else the first include directory of opts
// (--include-path=DIR) that has one.
func findCUB(opts []string, hdrs map[string]string, read func(string) ([]byte, error)) CUBFound {
	if text, ok := hdrs["cub/version.cuh"]; ok {
		if v, ok := parseCUBVersion(text); ok {
			return CUBFound{Version: v, File: "cub/version.cuh"}
		}
	}
	for _, o := range opts {
		dir, ok := strings.CutPrefix(o, "--include-path=")
		if !ok {
			continue
		}
		file := filepath.Join(dir, "cub", "version.cuh")
		if b, err := read(file); err == nil {
			v, _ := parseCUBVersion(string(b))
			return CUBFound{Version: v, File: file}
		}
	}
	return CUBFound{}
}

// cubHint is the line a failed compile's message ends with when an error
// of its log concerns CUB; "" otherwise.
func cubHint(log string, cub CUBFound) string {
	errs := cubError.FindAllString(log, -1)
	if len(errs) == 0 {
		return ""
	}
	if cub.File == "" {
		return fmt.Sprintf("hint: the errors name CUB, and no cub/version.cuh is on the include path: set %s to a CUDA toolkit's include directory (or CCCL's)", IncludeEnv)
	}
	version := "CUB " + cub.Version
	if cub.Version == "" {
		version = "a CUB whose CUB_VERSION could not be read"
	}
	hint := fmt.Sprintf("hint: the errors name CUB, and the include path has %s (%s); CUB 2 added API that CUB 1.x lacks, and CUB 2 and CCCL 3 removed some of CUB 1's (cub::Max, cub::Sum: use cuda::maximum<>, cuda::std::plus<>): a source written for another CUB may not compile with this one, and the GPU machine's CUB (CCCL 3's, or an older one) may differ from it",
		version, cub.File)
	if strings.HasPrefix(cub.Version, "1.") && hostPartsOfCUB1(errs) {
		hint += "; under NVRTC, CUB 1.x's BlockLoad and WarpLoad, and the iterator headers they include, reach host code NVRTC rejects"
	}
	return hint
}

// hostPartsOfCUB1 says whether an error names CUB's BlockLoad or
// WarpLoad or sits in one of CUB's own headers: with CUB 1.x, what
// mltop's <cub/cub.cuh> leaves out, or a header that reaches CUB 1's host
// code (util_device.cuh).
func hostPartsOfCUB1(errs []string) bool {
	for _, e := range errs {
		file, _, _ := strings.Cut(e, ":")
		if strings.Contains(e, "BlockLoad") || strings.Contains(e, "WarpLoad") || strings.Contains(file, "/cub/") {
			return true
		}
	}
	return false
}

// withCUBHint adds cubHint's line to a failed compile's error.
func withCUBHint(err error, log string, opts []string, hdrs map[string]string) error {
	if err == nil || cubError.FindStringIndex(log) == nil {
		return err
	}
	if hint := cubHint(log, findCUB(opts, hdrs, os.ReadFile)); hint != "" {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	return err
}
