package user

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file rewrites the few spellings nvcc accepts in device code and NVRTC
// refuses, in place on their lines (so messages keep the user's lines):
//   - `__host__` (or a macro that writes it, C10_HOST_DEVICE) on a variable at
//     namespace scope: nvcc warns that it does not apply and ignores it,
//     NVRTC stops with an error; it goes, `__device__` stays.
//   - `namespace std { template <> struct numeric_limits<X> … }`: std names
//     libcu++'s cuda::std through a using-directive, and a template can only
//     be specialized in its own namespace, so such a block opens
//     `namespace cuda::std` instead.
//   - `__device__` (`__host__ __device__`) on a lambda in device code
//     (prepare_lambda.go).

// lineEdit replaces old with text at column col (0-based, in bytes) of
// line (1-based) of a unit's code; columns stay valid after csrc.Blank,
// which keeps the columns of what it leaves.
type lineEdit struct {
	line, col int
	old, text string
}

// sourceEdits are the edits of each CUDA unit.
func (p *prepared) sourceEdits() map[*unit][]lineEdit {
	if p.lang != "cuda" {
		return nil
	}
	out := map[*unit][]lineEdit{}
	macros, defs := p.hostMacros(), p.objectMacros()
	for _, u := range p.units {
		edits := append(hostOffVariables(u, macros), lambdaAnnotations(u, defs)...)
		if p.toolkit.libcu {
			edits = append(edits, stdSpecializationBlocks(u)...)
		}
		if len(edits) > 0 {
			out[u] = edits
		}
	}
	return out
}

// applyLineEdits applies edits to code, each only where its line still
// holds old at its column.
func applyLineEdits(code string, edits []lineEdit) string {
	if len(edits) == 0 {
		return code
	}
	lines := strings.SplitAfter(code, "\n")
	slices.SortFunc(edits, func(a, b lineEdit) int { // right to left within a line
		if a.line != b.line {
			return a.line - b.line
		}
		return b.col - a.col
	})
	for _, e := range edits {
		if e.line < 1 || e.line > len(lines) {
			continue
		}
		l := lines[e.line-1]
		if e.col >= 0 && e.col+len(e.old) <= len(l) && l[e.col:e.col+len(e.old)] == e.old {
			lines[e.line-1] = l[:e.col] + e.text + l[e.col+len(e.old):]
		}
	}
	return strings.Join(lines, "")
}

// editAt is the edit replacing code[off:off+len(old)] with text.
func editAt(code string, off int, old, text string) lineEdit {
	ls := strings.LastIndexByte(code[:off], '\n') + 1
	return lineEdit{line: strings.Count(code[:off], "\n") + 1, col: off - ls, old: old, text: text}
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// hostOffVariables drops `__host__` from the specifiers of u's
// namespace-scope variables that reach NVRTC, written out or through an
// object-like macro (the source's own, or c10's C10_HOST_DEVICE and
// C10_HOST, which the torch stubs define): the macro's name becomes what
// it writes less `__host__`. Lambdas in the initializer keep theirs.
func hostOffVariables(u *unit, macros map[string]string) []lineEdit {
	var out []lineEdit
	for _, d := range u.scan.Decls {
		if d.Kind != csrc.Variable || d.Host() || len(d.Names) == 0 || d.End > len(u.code) {
			continue
		}
		text := u.code[d.Start:d.End]
		name := regexp.MustCompile(`\b` + regexp.QuoteMeta(d.Names[0]) + `\b`).FindStringIndex(text)
		if name == nil {
			continue
		}
		for _, m := range identifier.FindAllStringIndex(text[:name[0]], -1) {
			id := text[m[0]:m[1]]
			var repl string
			switch body, isMacro := macros[id]; {
			case id == "__host__":
				repl = strings.Repeat(" ", len(id))
			case isMacro:
				repl = body
				if len(repl) < len(id) { // keep the columns after it
					repl += strings.Repeat(" ", len(id)-len(repl))
				}
			default:
				continue
			}
			out = append(out, editAt(u.code, d.Start+m[0], id, repl))
		}
	}
	return out
}

// hostMacros are the object-like macros of the source (and c10's, unless
// the source defines them) that write `__host__`, each with what it
// writes without it.
func (p *prepared) hostMacros() map[string]string {
	defs := p.objectMacros()
	for name, body := range map[string]string{"C10_HOST_DEVICE": "__host__ __device__", "C10_HOST": "__host__"} {
		if _, own := defs[name]; !own {
			defs[name] = body
		}
	}
	out := map[string]string{}
	for name := range defs {
		if words := expandWords(defs, name, 0); slices.Contains(words, "__host__") {
			out[name] = strings.Join(slices.DeleteFunc(words, func(w string) bool { return w == "__host__" }), " ")
		}
	}
	return out
}

// expandWords are the words macro name writes, macros within expanded (a
// few levels deep); nil when it writes anything but identifiers.
func expandWords(defs map[string]string, name string, depth int) []string {
	body, ok := defs[name]
	if !ok || body == csrc.Ambiguous || depth > 8 {
		return []string{name}
	}
	var out []string
	for _, f := range strings.Fields(body) {
		if !identifier.MatchString(f) || identifier.FindString(f) != f {
			return nil
		}
		out = append(out, expandWords(defs, f, depth+1)...)
	}
	return out
}

// libcuOnlyTemplates says whether a class or variable template of this
// name lives in libcu++'s cuda::std only (numeric_limits and the type
// traits), not in namespace std itself, where CCCL declares tuple_size,
// tuple_element and the like for structured bindings.
func libcuOnlyTemplates(name string) bool {
	switch name {
	case "numeric_limits", "common_type", "make_signed", "make_unsigned", "underlying_type":
		return true
	}
	return strings.HasPrefix(name, "is_")
}

var (
	stdBlockHead   = regexp.MustCompile(`^namespace\s+(std)\s*\{`)
	specialization = regexp.MustCompile(`^template\s*<[^>]*>\s*(?:struct|class)?[\w\s]*?\b([A-Za-z_]\w*)\s*<`)
)

// stdSpecializationBlocks are the edits that turn u's `namespace std {`
// blocks whose specializations are all of templates libcu++ alone
// declares into `namespace cuda::std {` blocks. A block that also
// specializes another (tuple_size) is left as it is.
func stdSpecializationBlocks(u *unit) []lineEdit {
	var out []lineEdit
	for _, d := range u.scan.Decls {
		if d.Kind != csrc.Namespace || d.Scope != "" || d.End > len(u.code) {
			continue
		}
		head := stdBlockHead.FindStringSubmatchIndex(u.code[d.Start:d.End])
		if head == nil {
			continue
		}
		ours, other := 0, 0
		for _, m := range u.scan.Decls {
			if m.Scope != "std" || m.Start < d.Start || m.End > d.End {
				continue
			}
			if s := specialization.FindStringSubmatch(u.code[m.Start:m.End]); s != nil {
				if libcuOnlyTemplates(s[1]) {
					ours++
				} else {
					other++
				}
			}
		}
		if ours > 0 && other == 0 {
			out = append(out, editAt(u.code, d.Start+head[2], "std", "cuda::std"))
		}
	}
	return out
}
