package cudaemu

import (
	"bufio"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Refusal is Compile's error for a construct the emulation cannot run:
// what it is, where (file:line of the user's source) and what to do.
type Refusal struct {
	What string // "inline PTX asm(...)"
	At   string // "softmax.cu:42"
	Why  string // what the emulation lacks, when more than "cannot run it"
}

func (r *Refusal) Error() string {
	why := r.Why
	if why == "" {
		why = "the CUDA emulation cannot run it"
	}
	return fmt.Sprintf("%s at %s: %s; run `mltop check --run` on a machine with an NVIDIA GPU", r.What, r.At, why)
}

// unemulated are the constructs the emulation refuses, found in the
// preprocessed text of the user's own files (macros expanded, what the
// preprocessor drops left out).
var unemulated = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`\b(?:asm|__asm__|__asm)\b\s*(?:volatile\b|__volatile__\b)?\s*\(`), "inline PTX `asm(...)`"},
	{regexp.MustCompile(`\bwmma\s*::`), "WMMA (nvcuda::wmma tensor-core fragments)"},
	{regexp.MustCompile(`\b(?:__pipeline_memcpy_async|__pipeline_commit|__pipeline_wait_prior|memcpy_async)\b`), "an asynchronous copy (cp.async, memcpy_async)"},
	{regexp.MustCompile(`\b(?:this_grid|grid_group|this_multi_grid)\b`), "cooperative grid synchronisation (cg::this_grid)"},
	{regexp.MustCompile(`\b(?:this_cluster|cluster_group|__cluster_dims__|cluster_dims)\b`), "thread block clusters"},
	{regexp.MustCompile(`\b(?:tex1Dfetch|tex[123]D\w*|texture\s*<|cudaTextureObject_t|cudaSurfaceObject_t|surf[123]D\w*)\b`), "a texture or surface"},
}

// missingHeader is a g++ -E error for an #include it cannot find.
var missingHeader = regexp.MustCompile(`(?m)^(.+?):(\d+):\d+: fatal error: ([^:]+): No such file or directory`)

// libraries are headers of libraries the emulation does not have, by the
// start of their name.
var libraries = []struct{ prefix, what string }{
	{"cub/", "CUB"}, {"cutlass/", "CUTLASS"}, {"cute/", "CuTe"}, {"thrust/", "Thrust"},
	{"cuda/", "libcu++ (<cuda/…>)"}, {"cooperative_groups/details", "cooperative groups beyond the block and its tiles"}, {"mma.h", "WMMA (<mma.h>)"},
	{"cuda_pipeline", "cp.async pipelines"}, {"cuda_awbarrier", "asynchronous barriers"},
	{"curand_kernel", "cuRAND's device API"},
}

// lineMarker is a preprocessor line marker of g++ -E: # LINE "FILE" FLAGS.
var lineMarker = regexp.MustCompile(`^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)$`)

// refuse preprocesses cc and returns a *Refusal for the first construct the emulation cannot run
// in the user's own files, or for an #include of a library it does not
// have; nil when there is none. A preprocessing error other than a missing
// header is left to the compile, which says it with its context.
func (e *Backend) refuse(cc string, dirs includeDirs) error {
	out, err := e.command(e.gxx, append(e.gxxFlags(dirs), "-E", cc)...).Output()
	if err != nil {
		if err := e.stopped(); err != nil {
			return fmt.Errorf("g++ stopped: %w", err)
		}
		var xe *exec.ExitError
		if !errors.As(err, &xe) {
			return err
		}
		if m := missingHeader.FindStringSubmatch(string(xe.Stderr)); m != nil {
			return missingRefusal(m[3], shortAt(m[1], m[2]))
		}
		return nil
	}
	return scanPreprocessed(string(out), e.shim)
}

// missingRefusal is the refusal of an #include of header at at.
func missingRefusal(header, at string) *Refusal {
	for _, l := range libraries {
		if strings.HasPrefix(header, l.prefix) {
			return &Refusal{What: fmt.Sprintf("#include <%s> (%s)", header, l.what), At: at,
				Why: "the CUDA emulation does not have " + l.what}
		}
	}
	return &Refusal{What: fmt.Sprintf("#include <%s>", header), At: at,
		Why: "the header is not found: the CUDA emulation has cuda_runtime.h, cuda_fp16.h, cuda_bf16.h, math_constants.h and the C++ library; a header of your own goes beside the source or in include_dirs:"}
}

// scanPreprocessed finds the first unemulated construct in the lines of
// g++ -E output that come from the user's files (not the C++ library's,
// flag 3, nor the emulation's headers under shim), or the first header
// of a library the emulation does not have that g++ found on its own
// (the toolkit's, where it is installed in /usr/include): refused at the
// user's line that leads to it.
func scanPreprocessed(out, shim string) error {
	type at struct {
		file string
		line int
		user bool
	}
	var stack []at // the include stack: the files entered, the innermost last
	cur := at{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		l := sc.Text()
		if m := lineMarker.FindStringSubmatch(l); m != nil {
			line, _ := strconv.Atoi(m[1])
			flags := m[3]
			next := at{file: m[2], line: line,
				user: !strings.Contains(flags, " 3") && !strings.HasPrefix(m[2], shim+string(filepath.Separator)) && !strings.HasPrefix(m[2], "<")}
			switch {
			case strings.Contains(flags, " 1"): // entering an #include
				if lib := libraryOf(next.file); lib != "" && !strings.HasPrefix(next.file, shim+string(filepath.Separator)) {
					for i := len(stack); i >= 0; i-- {
						from := cur
						if i < len(stack) {
							from = stack[i]
						}
						if from.user {
							return &Refusal{What: "an #include of " + lib, At: shortAt(from.file, strconv.Itoa(from.line)),
								Why: "the CUDA emulation does not have " + lib + " (g++ found the toolkit's " + filepath.Base(next.file) + ", which needs NVCC or NVRTC)"}
						}
					}
				}
				stack = append(stack, cur)
			case strings.Contains(flags, " 2") && len(stack) > 0: // back in the including file
				stack = stack[:len(stack)-1]
			}
			cur = next
			continue
		}
		if cur.user && strings.TrimSpace(l) != "" {
			for _, u := range unemulated {
				if u.re.MatchString(l) {
					return &Refusal{What: u.what, At: shortAt(cur.file, strconv.Itoa(cur.line))}
				}
			}
		}
		cur.line++
	}
	return nil
}

// libraryOf names the library a header g++ found belongs to, by its path
// ("" for none the emulation lacks).
func libraryOf(path string) string {
	p := filepath.ToSlash(path)
	for _, l := range libraries {
		if strings.Contains(p, "/"+l.prefix) && (l.prefix != "cuda/" || strings.Contains(p, "/include/cuda/")) {
			return l.what
		}
	}
	return ""
}

// shortAt is "FILE:LINE" with FILE as the source names it (its base name
// for a path in the emulation's own folders).
func shortAt(file, line string) string {
	if strings.Contains(file, "mltop-cudaemu-") {
		file = filepath.Base(file)
	}
	return file + ":" + line
}

// The source rewrites the emulation needs before g++ reads it.
var (
	// `extern __shared__ __align__(16) float s[];` is the launch's dynamic
	// shared memory: a pointer to the emulation's buffer of it.
	externShared = regexp.MustCompile(`\bextern\s+__shared__\s+([^;{}]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;`)
	alignSpec    = regexp.MustCompile(`\b(?:__align__|alignas)\s*\((?:[^()]|\([^()]*\))*\)`)
	// `static __shared__` would be `static static`: __shared__ is a static.
	staticShared = regexp.MustCompile(`\bstatic(\s+)__shared__\b`)
)

// cudaStdOpen opens the namespace mltop's NVRTC stubs specialise
// numeric_limits in (kernels/user's prepare_std.go, prepare_torchhalf.go).
const cudaStdOpen = "namespace cuda { namespace std {"

// forEmulation is a source's text as g++ compiles it for the emulation.
func forEmulation(src string) string {
	// mltop's PyTorch stubs specialise cuda::std::numeric_limits, which
	// NVRTC's std names; here cuda::std is the host library's std (include/
	// cuda/std/mltop_std.h), whose templates are specialised in std.
	src = strings.ReplaceAll(src, cudaStdOpen, `extern "C++" { namespace std {`)
	src = externShared.ReplaceAllStringFunc(src, func(m string) string {
		g := externShared.FindStringSubmatch(m)
		typ := strings.Join(strings.Fields(alignSpec.ReplaceAllString(g[1], " ")), " ")
		return fmt.Sprintf("%s* %s = reinterpret_cast<%s*>(emu_dyn_smem);", typ, g[2], typ)
	})
	return staticShared.ReplaceAllString(src, "${1}__shared__")
}
