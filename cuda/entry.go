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
// name NVRTC knows them by: with the namespaces they are declared in
// (fastertransformer::add_bias_tanh), without template arguments, in
// order, without repeats: the suggestions when an entry is not found.
func kernelNames(src string) []string {
	var out []string
	ns := namespaceTracker{src: src}
	for _, m := range globalDecl.FindAllStringSubmatchIndex(src, -1) {
		decl := strings.TrimSpace(kernelAttrRegex.ReplaceAllString(src[m[2]:m[3]], " "))
		name := identifier.FindString(decl)
		if q := ns.at(m[0]); q != "" && name != "" {
			name = q + "::" + name
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// namespaceTracker reads a source forward and says which named namespaces
// enclose an offset of it, skipping comments and string and character
// literals (an anonymous namespace adds no name).
type namespaceTracker struct {
	src     string
	i       int
	scopes  []string // one per open brace: a namespace's name, or ""
	pending []string // the name read since `namespace`, until its "{"
	inNS    bool     // a `namespace` keyword was read and its "{" (or ";", "=") not yet
}

// at reads on to offset (offsets only grow) and returns the enclosing
// namespaces there, "a::b".
func (t *namespaceTracker) at(offset int) string {
	s := t.src
	for t.i < offset && t.i < len(s) {
		c := s[t.i]
		switch {
		case strings.HasPrefix(s[t.i:], "//"):
			t.skipTo("\n")
		case strings.HasPrefix(s[t.i:], "/*"):
			t.skipTo("*/")
		case c == '"' || c == '\'' && (t.i == 0 || !isWordByte(s[t.i-1])): // not a digit separator (1'000)
			t.i++
			for t.i < len(s) && s[t.i] != c && s[t.i] != '\n' {
				if s[t.i] == '\\' {
					t.i++
				}
				t.i++
			}
			t.i++
		case isWordByte(c):
			j := t.i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			switch w := s[t.i:j]; {
			case w == "namespace":
				t.inNS, t.pending = true, nil
			case t.inNS && w != "inline":
				t.pending = append(t.pending, w)
			}
			t.i = j
		case c == '{':
			t.scopes = append(t.scopes, strings.Join(t.pending, "::"))
			t.inNS, t.pending = false, nil
			t.i++
		case c == '}':
			if len(t.scopes) > 0 {
				t.scopes = t.scopes[:len(t.scopes)-1]
			}
			t.i++
		case c == ';' || c == '=': // using namespace x; namespace a = b;
			t.inNS, t.pending = false, nil
			t.i++
		default:
			t.i++
		}
	}
	var names []string
	for _, n := range t.scopes {
		if n != "" {
			names = append(names, n)
		}
	}
	return strings.Join(names, "::")
}

// skipTo moves past the next end (or to the end of the source).
func (t *namespaceTracker) skipTo(end string) {
	if k := strings.Index(t.src[t.i+2:], end); k >= 0 {
		t.i += 2 + k + len(end)
	} else {
		t.i = len(t.src)
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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
