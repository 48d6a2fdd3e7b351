package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file finds the module globals a whole program fills from host code
// (`cudaMemcpyToSymbol(c_Kernel, h_Kernel, …)`) and a kernel reads. mltop
// blanks the host code, so without a `symbol:` buffer the kernel would read
// zeros: each such global gets one, its init a TODO (the host's values are
// the user's to give).

// symbolFills are the host calls that copy into a module global named by
// their first argument.
var symbolFills = map[string]bool{
	"cudaMemcpyToSymbol": true, "cudaMemcpyToSymbolAsync": true,
	"hipMemcpyToSymbol": true, "hipMemcpyToSymbolAsync": true,
}

// global is one variable declared at file or namespace scope.
type global struct {
	name, scope string
	text        string // the whole declaration, as written
	line        int    // of the declaration, in the joined text
	space       string // __constant__, __device__, __managed__, __shared__; "" for a host variable
}

func (g *global) qualified() string {
	if g.scope == "" {
		return g.name
	}
	return g.scope + "::" + g.name
}

// hostFill is a host call that copies into a global.
type hostFill struct {
	g    *global
	call string // cudaMemcpyToSymbol, …
	line int    // in the joined text
}

// addSymbols adds a `symbol:` buffer for each module global that host
// code fills and device code names, in the order the host first fills
// them. A pointer global gets a note instead (mltop fills arrays and
// scalars, not pointers).
func (c *context) addSymbols(p *plan) {
	if c.lang != "cuda" {
		return // Metal has no globals the host fills
	}
	scan := csrc.Scan(c.src)
	globals := globalsOf(c.src, scan)
	read := deviceNames(c.src, scan)
	macros := extentMacros(c.src, scan)
	seen := map[*global]bool{}
	// host code under #ifndef __CUDA_ARCH__ fills them as well
	for _, f := range hostFills(c.src, csrc.ScanIn(c.src, csrc.HostMacros()), globals) {
		g := f.g
		if seen[g] || !read[g.name] || g.space == "" || g.space == "__shared__" {
			continue
		}
		seen[g] = true
		words, extents, ptr := csrc.Declarator(g.text, g.name)
		elem := strings.ReplaceAll(strings.Join(words, " "), " :: ", "::")
		if ptr {
			p.symbolNotes = append(p.symbolNotes, p.todo(
				fmt.Sprintf("the host fills pointer global %s (%s at %s): mltop fills arrays and scalars, not pointers; pass the buffer it points to as a kernel argument", g.qualified(), f.call, p.lines.at(f.line)),
				"%s is a pointer global the host fills (%s at %s): no buffer written; pass what it points to as a kernel argument", g.qualified(), f.call, p.lines.at(f.line)))
			continue
		}
		b := c.symbolBuffer(p, f, elem, extents, macros)
		if strings.HasPrefix(b.dtype, "i") || strings.HasPrefix(b.dtype, "u") {
			if deviceTicketCounter(c.src, scan, g.name) {
				ticketGlobal(p, b, f)
			}
		}
	}
}

// symbolBuffer writes the buffer that fills global f.g: its dtype from the
// element type, its shape from the declared extents (a literal, a macro's
// or constant's value, a dim), with TODOs for what it cannot tell.
func (c *context) symbolBuffer(p *plan, f hostFill, elem string, extents []string, macros map[string]string) *buffer {
	g := f.g
	b := &buffer{symbol: "true"}
	b.name, _ = p.claim(bufferName(g.name), "buffer")
	if b.name != g.name || g.scope != "" {
		b.symbol = g.qualified()
	}
	decl := strings.Join(strings.Fields(strings.TrimSuffix(strings.TrimSpace(g.text), ";")), " ")
	var todos []string
	dt, vec, ok := c.symbolDType(elem)
	if !ok {
		todos = append(todos, p.todo(fmt.Sprintf("element type %s: give the dtype (and shape) whose bytes match it", elem),
			"%s: mltop has no dtype for its element type %s: guessed f32; make the buffer's bytes match the declaration", g.qualified(), elem))
	}
	b.dtype = dt
	var known []string
	for _, x := range extents {
		switch v, isConst := csrc.IntConst(x, macros); {
		case isConst && v > 0:
			b.shape = append(b.shape, strconv.FormatInt(v, 10))
			if _, err := strconv.Atoi(strings.TrimSpace(x)); err != nil {
				known = append(known, fmt.Sprintf("%s = %d", x, v))
			}
		case p.taken[x] == "dim":
			b.shape = append(b.shape, x)
		default:
			b.shape = append(b.shape, "1")
			what := "[" + x + "]"
			todos = append(todos, p.todo(fmt.Sprintf("the extent %s of %s: mltop cannot tell its value; put it in shape", what, g.qualified()),
				"%s: mltop cannot tell the declared extent %s: its shape says 1 there", g.qualified(), what))
		}
	}
	if len(b.shape) == 0 {
		b.shape = []string{"1"} // a scalar global
	}
	if len(vec.extents) > 0 {
		b.shape = append(b.shape, vec.extents...)
		known = append(known, vec.what)
	}
	b.init = inputInit(p, dt)
	from := fmt.Sprintf("%s at %s", f.call, p.lines.at(f.line))
	todos = append([]string{p.todo(fmt.Sprintf("the host fills it (%s): give the values it copies, e.g. npy:%s.npy", from, b.name),
		"%s is filled by host code (%s), which mltop blanks: buffer %s fills it with %s; give it the values the host copies", g.qualified(), from, b.name, b.init)}, todos...)
	b.how = fmt.Sprintf("`%s` (%s)", decl, p.lines.at(g.line))
	if len(known) > 0 {
		b.how += ", " + strings.Join(known, ", ")
	}
	b.shapeComment = strings.Join(todos, "; ")
	p.bufs = append(p.bufs, b)
	return b
}

// ticketGlobal turns global b, which the host fills (f) and a kernel takes
// tickets from (ticket.go), into zeros: the host's fill resets the
// counter. It stays a symbol buffer, filled once per spec (a global cannot
// be scratch): the kernel's last block must reset it, as real ones do.
func ticketGlobal(p *plan, b *buffer, f hostFill) {
	fillTODO, others, _ := strings.Cut(b.shapeComment, "; ") // symbolBuffer's first TODO is the host's fill
	p.dropNote(fillTODO)
	b.init = "zeros"
	from := fmt.Sprintf("%s at %s", f.call, p.lines.at(f.line))
	b.shapeComment = p.todo(fmt.Sprintf("a ticket counter the host resets (%s): zeros, filled once per spec; the kernel's last block must reset it to 0", from),
		"%s is a ticket counter (an atomic on it decides the last block) that the host resets (%s): buffer %s fills it with zeros once per spec, so the kernel must reset it itself; mltop cannot reset a global before every launch", f.g.qualified(), from, b.name)
	if others != "" {
		b.shapeComment += "; " + others
	}
}

// bufferName is a manifest name for global name: its own, less the
// leading underscores a buffer name cannot start with.
func bufferName(name string) string {
	if n := strings.TrimLeft(name, "_"); n != "" {
		return n
	}
	return "table"
}

// symbolDType is the buffer dtype of a global's element type and, for a
// vector type (a float4 table of N is a buffer of N×4), its lanes; ok false (and f32) when no dtype has its bytes
// (double, char, a struct).
func (c *context) symbolDType(elem string) (dt string, vec vecType, ok bool) {
	if c.generic(elem, csrc.Signature{}) && elem != "void" {
		return c.elemDType(elem, csrc.Signature{}), vecType{}, true
	}
	t := elem
	if u, has := c.typedefs[t]; has && u != "" {
		t = u
	}
	if v, isVector := vectorType(t, c.lang); isVector {
		t, vec = v.scalar, v
	}
	if t == "double" || cTypes[t] == "" {
		return "f32", vecType{}, false
	}
	return cTypes[t], vec, true
}

// globalsOf are the variables the source declares at file or namespace
// scope, each declarator its own.
func globalsOf(src string, scan *csrc.File) []*global {
	var out []*global
	for _, d := range scan.Decls {
		if d.Kind != csrc.Variable {
			continue
		}
		text := src[d.Start:d.End]
		for _, n := range d.Names {
			out = append(out, &global{name: n, scope: d.Scope, text: text, line: d.Line, space: memorySpace(text)})
		}
	}
	return out
}

// memorySpace is the memory-space word of a declaration, "" for a host
// variable.
func memorySpace(decl string) string {
	for _, t := range csrc.Tokenize(decl) {
		switch t.Text {
		case "__constant__", "__device__", "__managed__", "__shared__":
			return t.Text
		}
	}
	return ""
}

// deviceNames are the identifiers that device functions (kernels and
// __device__ helpers) use.
func deviceNames(src string, scan *csrc.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range scan.Decls {
		if d.Kind != csrc.Function || !d.Device || !d.Definition {
			continue
		}
		for _, t := range csrc.Tokenize(src[d.Start:d.End]) {
			if t.Kind == csrc.Ident {
				out[t.Text] = true
			}
		}
	}
	return out
}

// hostFills are the calls of host functions that copy into one of the
// globals, in source order.
func hostFills(src string, scan *csrc.File, globals []*global) []hostFill {
	var out []hostFill
	for _, d := range scan.Decls {
		if d.Kind != csrc.Function || !d.Host() {
			continue
		}
		toks := csrc.Tokenize(src[d.Start:d.End])
		for i := 0; i+1 < len(toks); i++ {
			if !symbolFills[toks[i].Text] || toks[i+1].Text != "(" {
				continue
			}
			if g := filledGlobal(firstArg(toks, i+1), d.Scope, globals); g != nil {
				out = append(out, hostFill{g: g, call: toks[i].Text, line: d.Line + toks[i].Line - 1})
			}
		}
	}
	return out
}

// firstArg is the tokens of the first argument of the call whose "(" is
// toks[open].
func firstArg(toks []csrc.Token, open int) []csrc.Token {
	return csrc.SplitAtCommas(toks[open+1:csrc.Matching(toks, open)], false)[0]
}

// filledGlobal is the global a fill call's first argument names, however
// it is spelt: c_Kernel, ns::c_Kernel, (const void*)&c_Kernel,
// HIP_SYMBOL(c_Kernel); nil when it names none.
func filledGlobal(arg []csrc.Token, callScope string, globals []*global) *global {
	for i := 0; i < len(arg); i++ {
		if arg[i].Kind != csrc.Ident {
			continue
		}
		parts := []string{arg[i].Text}
		if i > 0 && arg[i-1].Text == "::" {
			parts = []string{"", arg[i].Text} // ::name: the file-scope one
		}
		for i+2 < len(arg) && arg[i+1].Text == "::" && arg[i+2].Kind == csrc.Ident {
			parts = append(parts, arg[i+2].Text)
			i += 2
		}
		if g := lookupGlobal(parts, callScope, globals); g != nil {
			return g
		}
	}
	return nil
}

// lookupGlobal finds a global by its name as written: qualified, in the
// namespace that names it; unqualified, in the call's namespace and then
// the enclosing ones, else the only global of that name (a using
// directive).
func lookupGlobal(parts []string, callScope string, globals []*global) *global {
	name := parts[len(parts)-1]
	match := func(scope string) *global {
		i := slices.IndexFunc(globals, func(g *global) bool { return g.name == name && g.scope == scope })
		if i < 0 {
			return nil
		}
		return globals[i]
	}
	if len(parts) > 1 {
		qual := strings.Join(parts[:len(parts)-1], "::")
		for _, g := range globals {
			if g.name == name && (g.scope == qual || strings.HasSuffix(g.scope, "::"+qual)) {
				return g
			}
		}
		return nil
	}
	for s := callScope; ; {
		if g := match(s); g != nil {
			return g
		}
		if s == "" {
			break
		}
		k := strings.LastIndex(s, "::")
		s = s[:max(k, 0)]
	}
	var only *global
	for _, g := range globals {
		if g.name == name {
			if only != nil {
				return nil
			}
			only = g
		}
	}
	return only
}

// intConstantsRE is a file-scope declaration of integer constants
// (`constexpr int TAPS = 2 * R + 1;`, `const int ROWS = 4, COLS = 8;`):
// its declarators are group 1.
var intConstantsRE = regexp.MustCompile(`^(?:static\s+|inline\s+)*(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+int|unsigned|int|long|size_t|uint|uint32_t|int32_t|int64_t)\s+([^;{}]+);\s*$`)

// initDeclRE is one declarator with its initializer: NAME = EXPR.
var initDeclRE = regexp.MustCompile(`^\s*([A-Za-z_]\w*)\s*=\s*(.+?)\s*$`)

// extentMacros are the names an extent may use, by their text: the live
// object-like #defines, and the file-scope integer constants a #define
// does not already name.
func extentMacros(src string, scan *csrc.File) map[string]string {
	out := csrc.ObjectMacros(scan)
	for _, d := range scan.Decls {
		if d.Kind != csrc.Variable {
			continue
		}
		m := intConstantsRE.FindStringSubmatch(strings.TrimSpace(src[d.Start:d.End]))
		if m == nil {
			continue
		}
		for _, part := range strings.Split(m[1], ",") { // an initializer with a comma fails IntConst: a TODO
			if nv := initDeclRE.FindStringSubmatch(part); nv != nil {
				if _, isMacro := out[nv[1]]; !isMacro {
					out[nv[1]] = nv[2]
				}
			}
		}
	}
	return out
}
