package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// ExtraOptionsEnv adds NVRTC options to every compile (space separated, e.g.
// "-DQ_IN_REGS=0 -maxrregcount=128"): for kernel experiments. They are part
// of the compile-cache key.
const ExtraOptionsEnv = "MLTOP_NVRTC_OPTIONS"

// CompileOptions are the NVRTC flags for a program on this device. A user
// program (Code set) also gets its IncludeDirs, then the toolkit's include
// directories (see Toolkit), as --include-path; built-in shaders need none.
func CompileOptions(p profiler.Program, arch string) []string {
	var toolkit []string
	if p.Code != "" {
		toolkit = ToolkitIncludeDirs()
	}
	return compileOptions(p, arch, toolkit, os.Getenv(ExtraOptionsEnv))
}

// compileOptions builds the flags from what CompileOptions reads of the
// machine.
func compileOptions(p profiler.Program, arch string, toolkit []string, extra string) []string {
	opts := []string{"--gpu-architecture=" + arch, "-lineinfo", "--std=c++17", "-default-device"}
	for _, m := range p.Macros {
		opts = append(opts, "-D"+m.Name+"="+m.Value)
	}
	if p.Code != "" {
		seen := map[string]bool{}
		for _, d := range append(append([]string(nil), p.IncludeDirs...), toolkit...) {
			if d = filepath.Clean(d); !seen[d] {
				seen[d] = true
				opts = append(opts, "--include-path="+d)
			}
		}
	}
	return append(opts, strings.Fields(extra)...)
}

// maxFingerprintFiles bounds the walk of a program's include directories:
// past it the cache key stops following edits (a whole tree such as / was
// named by mistake).
const maxFingerprintFiles = 20000

// includeFingerprint identifies the state of a program's own include
// directories (every file's path, size and modification time), so that
// editing a header there compiles again instead of reusing a stale cubin.
// The toolkit's directories are covered by the compiler version and the
// include path in the options.
func includeFingerprint(dirs []string) string {
	if len(dirs) == 0 {
		return ""
	}
	h := sha256.New()
	files := 0
	for _, d := range dirs {
		filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(h, "%s:error;", path)
				return nil
			}
			if e.IsDir() {
				return nil
			}
			if files++; files > maxFingerprintFiles {
				return filepath.SkipAll
			}
			if info, err := e.Info(); err == nil {
				fmt.Fprintf(h, "%s:%d:%d;", path, info.Size(), info.ModTime().UnixNano())
			}
			return nil
		})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compileKeyTail is the part of the compile-cache key beyond the source,
// headers, macros and arch: the compiler, its options (the include path
// among them), the entry's name expression (each instantiation is its own
// cubin) and the state of the program's own include directories.
func compileKeyTail(compiler string, opts []string, entryExpr string, includeDirs []string) string {
	return compiler + " " + strings.Join(opts, " ") + " entry=" + entryExpr + " " + includeFingerprint(includeDirs)
}

// optionsFor adapts the compile options to the NVRTC that runs them:
// NVRTC 11.x crashes (a segfault in the process: mltop check went down
// with it) on -lineinfo for a kernel whose body starts on its signature's
// line and calls an inlined device function (`__global__ void k(float* y,
// int n){ f(y, n); }`), so 11.x compiles without line information. The
// cache key keeps the options asked for: one NVRTC per cache directory.
func optionsFor(opts []string, nvrtcMajor int) []string {
	if nvrtcMajor <= 0 || nvrtcMajor >= 12 {
		return opts
	}
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		if o != "-lineinfo" {
			out = append(out, o)
		}
	}
	return out
}
