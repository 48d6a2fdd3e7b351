package cuda

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// entryExpression is the NVRTC name expression a program's entry is
// compiled with: a user program's Entry as written (an extern "C" name,
// ns::kernel, kernel<float, 4>), or "" for mltop's own shaders, which are
// extern "C" and looked up by their plain names as before.
func entryExpression(p profiler.Program, namesEntries bool) string {
	if p.Code == "" || !namesEntries {
		return ""
	}
	return strings.TrimSpace(p.Entry)
}

// kernelAttribute is a keyword with arguments that can sit between
// __global__ and a kernel's name.
const kernelAttribute = `__launch_bounds__\s*\([^()]*\)|__cluster_dims__\s*\([^()]*\)|__maxnreg__\s*\([^()]*\)|\[\[[^\]]*\]\]`

var (
	// globalDecl finds a __global__ declaration up to its parameter list:
	// group 1 is the return type, attributes and name.
	globalDecl      = regexp.MustCompile(`__global__\s((?:` + kernelAttribute + `|[^;{}()])*)\(`)
	kernelAttrRegex = regexp.MustCompile(kernelAttribute)
	identifier      = regexp.MustCompile(`[A-Za-z_]\w*$`)
)

// kernelNames lists the __global__ functions a source declares, by the
// name they are written with (no namespace, no template arguments), in
// order, without repeats: the suggestions when an entry is not found.
func kernelNames(src string) []string {
	var out []string
	for _, m := range globalDecl.FindAllStringSubmatch(src, -1) {
		decl := strings.TrimSpace(kernelAttrRegex.ReplaceAllString(m[1], " "))
		name := identifier.FindString(decl)
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// entryNotFound explains an entry NVRTC or the driver could not find, and
// lists the kernels the source declares.
func entryNotFound(file, entry, what string, src string) error {
	msg := fmt.Sprintf("%s has no kernel %q", file, entry)
	if what != "" {
		msg += ": " + what
	}
	if names := kernelNames(src); len(names) > 0 {
		msg += "\nkernels in " + file + ": " + strings.Join(names, ", ") +
			" (a template needs its arguments, e.g. name<float, 4>; a kernel in a namespace its full name, ns::name)"
	} else {
		msg += "\n" + file + " declares no __global__ function"
	}
	return fmt.Errorf("%s", msg)
}

// nvrtcNameMap is the file NVRTC attributes a name expression's errors to
// (`__nv_name_map:2: error: cannot determine which instance of function
// template "k" is intended`): the entry, not the program, is at fault.
const nvrtcNameMap = "__nv_name_map"

// logError finds an error diagnostic in a rewritten NVRTC log.
var logError = regexp.MustCompile(`(?m)^([^\s:][^:\n]*):\d+: (?:catastrophic error|internal error|error)\b.*$`)

// firstSourceError is the first error of a rewritten NVRTC log in the
// program's own files ("k.cu:4: error: identifier … is undefined"), or ""
// when the log has none outside the name map.
func firstSourceError(log string) string {
	for _, m := range logError.FindAllStringSubmatch(log, -1) {
		if m[1] != nvrtcNameMap {
			return strings.TrimSpace(m[0])
		}
	}
	return ""
}

// compileError is a failed compile, led by its first error in the
// program's files and followed by NVRTC's whole log once; it unwraps to
// NVRTC's status.
type compileError struct {
	msg   string
	cause error
}

func (e *compileError) Error() string { return e.msg }
func (e *compileError) Unwrap() error { return e.cause }

// sourceCompileError is err (a failed compile whose log is log) led by
// the first error in the program's own files; nil when the log has none,
// so that the caller can look for another cause (the entry's name).
func sourceCompileError(err error, log string) error {
	first := firstSourceError(log)
	if first == "" {
		return nil
	}
	cause := errors.Unwrap(err)
	if cause == nil {
		cause = err
	}
	msg := first
	if rest := strings.TrimSpace(log); rest != "" {
		msg += "\n" + rest
	}
	return &compileError{msg: msg, cause: cause}
}
