package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// sharedDecl matches a static shared array: CUDA __shared__ or Metal
// threadgroup, a type, a name and one or more [extent]s.
var sharedDecl = regexp.MustCompile(`(?m)(extern\s+)?(?:__shared__|\bthreadgroup)\s+(?:volatile\s+)?(?:__align__\(\d+\)\s+)?([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+)`)

// extentRE is one [extent] of a declaration.
var extentRE = regexp.MustCompile(`\[([^\]]*)\]`)

// scalarBytes are the sizes of Metal element types user.ElemBytes does not
// list (it holds the CUDA and C ones).
var scalarBytes = map[string]int{"ushort": 2, "uchar": 1, "float3": 12, "half4": 8}

// sharedSizer writes a shared array's bytes in the terms `mltop check`
// suggests them (kernels/user/lint's sizeResolver): the source's integer
// macros and constants are their values, the knobs and dims the plan made
// are their names (a macro a knob now sets among them: TILE of an
// #ifndef TILE), the entry's template parameters are the entry's template
// arguments, and the body's own integer constants their initializers. The
// evaluation is csrc.IntConst's, check's own.
type sharedSizer struct {
	macros  map[string]string // the source's object-like macros, those the plan names removed
	known   map[string]bool   // knobs and dims of the plan
	tparams map[string]string // entry template parameter → the entry's argument
	locals  map[string]string // the body's integer constants → initializer
	dtype   string            // the dtype's name (its sizeof stays)
	unknown []string
}

// sharedItems suggests a tgm: item for each static shared array in the
// entry's body: its bytes as a number or an expression of knobs and dims,
// else a commented TODO line saying what is unknown. The extern (unsized)
// arrays, sized at launch, are dynamic: the dispatch's dynamic_tgm TODO
// names them.
func (c *context) sharedItems(p *plan, k *kernelScan, body string) (items, dynamic []string) {
	macros := csrc.ObjectMacros(csrc.Scan(c.src))
	known := map[string]bool{}
	for n, kind := range p.taken {
		if kind == "knob" || kind == "dim" {
			known[n] = true
			delete(macros, n) // mltop #defines it: the manifest's name
		}
	}
	for _, m := range sharedDecl.FindAllStringSubmatch(body, -1) {
		typ, name, ext := m[2], m[3], m[4]
		if m[1] != "" {
			dynamic = append(dynamic, name)
			continue
		}
		s := &sharedSizer{macros: macros, known: known, tparams: k.targs, locals: bodyIntConsts(body), dtype: c.dtypeName}
		var extents []string
		for _, e := range extentRE.FindAllStringSubmatch(ext, -1) {
			extents = append(extents, strings.TrimSpace(e[1]))
		}
		decl := strings.TrimSpace(m[0])
		bytes, todo := s.bytes(typ, name, extents)
		if todo != "" {
			items = append(items, fmt.Sprintf("# - {name: %s, bytes: \"TODO\"}   # TODO: bytes of %s: %s", name, decl, todo))
			continue
		}
		items = append(items, fmt.Sprintf("- {name: %s, bytes: \"%s\"}   # %s", name, bytes, decl))
	}
	return items, dynamic
}

// bytes is an array's bytes as a manifest expression (a number when it is
// constant), or a TODO saying what the manifest cannot say.
func (s *sharedSizer) bytes(typ, name string, extents []string) (bytes, todo string) {
	var factors []string
	for _, e := range extents {
		factors = append(factors, parenthesize(s.resolve(e, 0)))
	}
	if arg, ok := s.tparams[typ]; ok {
		typ = arg
	}
	elem := ""
	switch n, ok := user.ElemBytes(typ); {
	case typ == s.dtype || typ == "T":
		elem = "sizeof(" + typ + ")"
	case ok:
		elem = strconv.Itoa(n)
	case scalarBytes[typ] > 0:
		elem = strconv.Itoa(scalarBytes[typ])
	}
	switch {
	case len(s.unknown) > 0:
		return "", fmt.Sprintf("its size uses %s, which no knob or dim names", strings.Join(s.unknown, ", "))
	case elem == "":
		return "", fmt.Sprintf("mltop does not know the size of %s", typ)
	}
	expr := strings.Join(append(factors, elem), " * ")
	if v, ok := csrc.IntConst(expr, nil); ok {
		return strconv.FormatInt(v, 10), ""
	}
	return expr, ""
}

// resolve is an extent (or a constant's initializer) in the manifest's
// terms: a number when constant.
func (s *sharedSizer) resolve(text string, depth int) string {
	if v, ok := csrc.IntConst(text, s.macros); ok {
		return strconv.FormatInt(v, 10)
	}
	var parts []string
	for _, t := range csrc.Tokenize(text) {
		switch {
		case t.Kind == csrc.Number:
			if v, ok := csrc.IntConst(t.Text, nil); ok { // 32u → 32
				parts = append(parts, strconv.FormatInt(v, 10))
				continue
			}
			parts = append(parts, t.Text)
		case t.Kind == csrc.Ident:
			parts = append(parts, s.name(t.Text, depth))
		default:
			parts = append(parts, t.Text)
		}
	}
	out := joinTokens(parts)
	if v, ok := csrc.IntConst(out, nil); ok {
		return strconv.FormatInt(v, 10)
	}
	return out
}

// name is one name of an extent in the manifest's terms: the body's own
// constants shadow the rest.
func (s *sharedSizer) name(n string, depth int) string {
	if init, ok := s.locals[n]; ok && init != "" && depth < 8 {
		return parenthesize(s.resolve(init, depth+1))
	}
	if arg, ok := s.tparams[n]; ok && depth < 8 {
		return parenthesize(s.resolve(arg, depth+1))
	}
	if v, ok := csrc.IntConst(n, s.macros); ok {
		return strconv.FormatInt(v, 10)
	}
	if s.known[n] {
		return n
	}
	if !slices.Contains(s.unknown, n) {
		s.unknown = append(s.unknown, n)
	}
	return n
}

// parenthesize wraps an expression of several tokens that replaces a name
// inside another.
func parenthesize(e string) string {
	if len(csrc.Tokenize(e)) <= 1 || wrapped(e) {
		return e
	}
	return "(" + e + ")"
}

// wrapped says whether e is one parenthesized expression: `(a + 1)`, not
// `(a) * (b)`.
func wrapped(e string) bool {
	if !strings.HasPrefix(e, "(") {
		return false
	}
	depth := 0
	for i, r := range e {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i == len(e)-1
			}
		}
	}
	return false
}

// joinTokens writes tokens as an expression: spaces between them, none
// inside parentheses.
func joinTokens(parts []string) string {
	var b strings.Builder
	for i, t := range parts {
		if i > 0 && t != ")" && parts[i-1] != "(" {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// bodyIntConsts are the integer constants a body declares, name →
// initializer (`constexpr int K = 2 * WG;`, `const uint n = 4;`); a name
// declared twice differently maps to "".
func bodyIntConsts(body string) map[string]string {
	out := map[string]string{}
	for _, m := range localConstRE.FindAllStringSubmatch(body, -1) {
		name, init := m[1], strings.TrimSpace(m[2])
		if was, seen := out[name]; seen && was != init {
			init = ""
		}
		out[name] = init
	}
	return out
}

var localConstRE = regexp.MustCompile(`(?:^|[;{}\n])\s*(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?(?:constant\s+)?(?:int|unsigned|unsigned\s+int|uint|size_t|int32_t|uint32_t|short|ushort|auto)\s+([A-Za-z_]\w*)\s*=\s*([^;,{}]+);`)
