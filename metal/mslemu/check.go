package mslemu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// ErrNoCompiler is CheckUser's error when g++ is not on the PATH.
var ErrNoCompiler = errors.New("g++ not found on PATH: the Metal source was not compiled (the MSL emulation needs a C++20 compiler with _Float16)")

// ErrAppleBuiltins is (wrapped in) CheckUser's error when g++ fails on
// names only Apple's Metal compiler has (__metal_fabs,
// __METAL_MAYBE_FAST_MATH__: what MLX's headers call directly): the
// emulation cannot judge such a source, which is not the source's fault.
var ErrAppleBuiltins = errors.New("the source uses Apple's Metal compiler builtins, which the MSL emulation does not have: not compiled here (Apple's compiler checks it on a Mac)")

// appleBuiltin matches a name of Apple's compiler in g++'s messages.
var appleBuiltin = regexp.MustCompile(`\b(__metal_\w+|__METAL_\w+__)\b`)

// appleBuiltins lists (sorted, at most 4) the names of Apple's compiler
// that g++'s error lines mention.
func appleBuiltins(out string) []string {
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, "error:") {
			continue
		}
		for _, m := range appleBuiltin.FindAllString(l, -1) {
			seen[m] = true
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	return names[:min(len(names), 4)]
}

// ErrSwizzles is (wrapped in) CheckUser's error when every error g++
// reports is a vector swizzle (v.xy, v.yx = …, M[0].xyz): Metal has them,
// the emulation's vectors have only the single lanes x, y, z, w, so the
// source cannot be judged here, which is not the source's fault.
var ErrSwizzles = errors.New("the source uses vector swizzles (v.xy, M[0].xyz), which the MSL emulation does not have: not compiled on the emulation (Apple's compiler checks it on a Mac)")

// swizzleMember matches g++'s error on a swizzle of an emulated vector:
// "'float4' {aka 'struct emu_vec<float, 4>'} has no member named 'xy'",
// with ASCII or typographic quotes. Single x, y, z, w are real members.
var swizzleMember = regexp.MustCompile(`emu_vec<[^>]*>['’}\s]*has no member named ['‘]([xyzw]{2,4}|[rgba]{1,4})['’]`)

// onlySwizzles reports, when g++'s output has errors and every one is a
// swizzle member (swizzleMember), the file and line of the first.
func onlySwizzles(out string) (file string, line int, ok bool) {
	for _, l := range strings.Split(out, "\n") {
		m := gxxError.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if !swizzleMember.MatchString(l) {
			return "", 0, false
		}
		if !ok {
			file, ok = m[1], true
			line, _ = strconv.Atoi(m[2])
		}
	}
	return file, line, ok
}

// lineMark is a #line directive: the next line's number and, when given,
// its file.
var lineMark = regexp.MustCompile(`^\s*#\s*line\s+(\d+)(?:\s+"([^"]*)")?`)

// quoteLine is "FILE:LINE: code", the code found in the text g++ compiled
// by following its #line directives (the assembled source is no file g++
// could quote); "FILE:LINE" when the text has no such line.
func quoteLine(compiled, file string, line int) string {
	at := fmt.Sprintf("%s:%d", file, line)
	cur, curFile := 1, ""
	for _, l := range strings.Split(compiled, "\n") {
		if m := lineMark.FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				curFile = m[2]
			}
			continue
		}
		if curFile == file && cur == line {
			return at + ": " + strings.TrimSpace(l)
		}
		cur++
	}
	return at
}

// MaxCheckErrors is how many g++ errors CheckUser reports at most.
const MaxCheckErrors = 10

// CheckUser compiles a user kernel's Metal program (kernels/user: macros
// already in the code) with g++ against the MSL emulation, syntax only,
// calling its entry as the emulator would. It proves that the text parses
// and type-checks as the emulated MSL subset; not that Apple's compiler
// accepts it. The error quotes g++'s messages (file:line of the user's
// source). bfloat is Metal 3.1's native type (__HAVE_BFLOAT__).
func CheckUser(ctx context.Context, p profiler.Program) error {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return ErrNoCompiler
	}
	full, err := metal.AssembleUserSource(p)
	if err != nil {
		return err
	}
	vals, err := metal.ResolveConstants(full, p.Constants)
	if err != nil {
		return fmt.Errorf("%s: %w", p.File, err)
	}
	full, _, call, err := emulatedEntry(full, vals, p)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mltop-mslcheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	full = forEmulation(full, call)
	cc := filepath.Join(dir, "check.cc")
	compiled := full + "\n#line 1 \"mltop-emulator-main.cc\"\n" + strings.Replace(emuMain, "CALL", call, 1)
	if err := os.WriteFile(cc, []byte(compiled), 0o644); err != nil {
		return err
	}
	// The first errors say what is wrong; a whole library beyond the
	// emulation (ggml's 12,000-line ggml-metal.metal) gives thousands more.
	// Only flags that keep the precompiled metal_stdlib valid are added
	// to gxxFlags (pch.go).
	command := func(name string, args ...string) *exec.Cmd { return exec.CommandContext(ctx, name, args...) }
	plain := func() (string, error) { return writeShim(dir) }
	out, shim, err := gxxEmulated(command, gxx, embeddedShim(), true, plain, ctx.Err, "-fsyntax-only", fmt.Sprintf("-fmax-errors=%d", MaxCheckErrors), cc)
	if shim == "" {
		return err // the headers could not be written
	}
	if ctx.Err() != nil {
		return fmt.Errorf("g++ stopped: %w", ctx.Err())
	}
	if names := appleBuiltins(string(out)); err != nil && len(names) > 0 {
		return fmt.Errorf("%s: %w (%s)", p.File, ErrAppleBuiltins, strings.Join(names, ", "))
	}
	if file, line, ok := onlySwizzles(string(out)); err != nil && ok {
		return fmt.Errorf("%s: %w; the first: %s", p.File, ErrSwizzles, quoteLine(compiled, file, line))
	}
	if err != nil {
		return fmt.Errorf("the MSL emulation (g++) rejects %s: %v\n%s", p.File, err, condenseErrors(string(out), shim))
	}
	return nil
}

// writeShim copies the embedded emulation headers into dir and returns
// the folder to pass as -I.
func writeShim(dir string) (string, error) {
	shim := filepath.Join(dir, "shim")
	if err := os.MkdirAll(shim, 0o755); err != nil {
		return "", err
	}
	ents, err := fs.ReadDir(metal.EmulationShim, metal.EmulationShimDir)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		b, err := metal.EmulationShim.ReadFile(metal.EmulationShimDir + "/" + e.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(shim, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return shim, nil
}

var (
	// gxxError is a g++ error line: file, line, column, message.
	gxxError = regexp.MustCompile(`^(\S[^:]*):(\d+):(\d+): (?:fatal )?error: `)
	// gxxQuote is the source line g++ quotes under a message ("   5 | code").
	gxxQuote = regexp.MustCompile(`^\s+\d+ \| `)
	// gxxRequired is where a template instantiation began
	// ("k.metal:5:32:   required from here").
	gxxRequired = regexp.MustCompile(`^(\S[^:]*:\d+:\d+):\s+required from here`)
)

// condenseErrors keeps of g++'s output each error line with the source
// line it quotes, and drops the rest: the notes on every candidate
// overload (40 lines for one exp(float4)), the include stack, the caret
// lines. An error inside the emulation's headers names the user's line
// that led there; errors inside the C++ library are part of a cascade and
// kept only when nothing else is. The emulation's headers are named
// mslemu/NAME instead of their temporary folder shim.
func condenseErrors(out, shim string) string {
	out = strings.ReplaceAll(out, shim+string(filepath.Separator), "mslemu/")
	var kept, library []string
	from := "" // the user's line that the current instantiation started at
	quoteNext := false
	for _, l := range strings.Split(out, "\n") {
		if m := gxxRequired.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "mslemu/") && !systemHeader(m[1]) {
			from = m[1]
		}
		if quoteNext && gxxQuote.MatchString(l) {
			kept = append(kept, l)
			quoteNext = false
			continue
		}
		quoteNext = false
		m := gxxError.FindStringSubmatch(l)
		switch {
		case m == nil:
			if strings.HasPrefix(l, "compilation terminated") {
				kept = append(kept, l)
			}
			continue
		case systemHeader(m[1]):
			library = append(library, l)
			continue
		case strings.HasPrefix(m[1], "mslemu/") && from != "":
			l += " (from " + from + ")"
		}
		kept = append(kept, l)
		quoteNext, from = true, ""
	}
	if len(kept) == 0 || len(kept) == 1 && strings.HasPrefix(kept[0], "compilation terminated") {
		kept = append(library, kept...)
	}
	if len(kept) == 0 { // nothing g++ calls an error: its whole output
		return strings.TrimSpace(out)
	}
	return strings.Join(kept, "\n")
}

// systemHeader reports whether file is one of the C++ library's headers.
func systemHeader(file string) bool {
	return strings.HasPrefix(file, "/usr/") || strings.Contains(file, "/include/c++/")
}
