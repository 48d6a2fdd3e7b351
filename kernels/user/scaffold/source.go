package scaffold

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file reads what the scaffold needs from a source beyond the entry's
// signature: the entry's template header and body, how the body uses each
// pointer, the source's block-size macros and constants, and the fields of
// a Metal parameter struct.

// tparam is one template parameter of an entry.
type tparam struct {
	name   string
	isType bool   // typename / class
	ctype  string // for a value parameter: int, bool, unsigned, …
	def    string // its default as written, "" if none
	pack   bool   // a parameter pack (`typename... Args`)
	fn     bool   // a function pointer (`void (*f)(const T*, short)`): its ctype is the whole declaration
}

// fnPointerName is the name a function-pointer parameter declares
// (`void ( * f ) ( … )` as words: "f"), "" for another declaration.
func fnPointerName(words []string) string {
	for i := 0; i+3 < len(words); i++ {
		if words[i] == "(" && (words[i+1] == "*" || words[i+1] == "&") && words[i+3] == ")" && nameRE.MatchString(words[i+2]) {
			return words[i+2]
		}
	}
	return ""
}

// entryAt is the index of the entry's name token in toks.
func entryAt(toks []csrc.Token, sig csrc.Signature) int {
	for i, t := range toks {
		if t.Text == sig.Entry && t.Line == sig.Line && i+1 < len(toks) && toks[i+1].Text == "(" {
			return i
		}
	}
	return -1
}

// templateOf reads the template header of the entry whose name is toks[at]:
// kinds and defaults of its parameters (csrc gives only their names).
func templateOf(toks []csrc.Token, at int) []tparam {
	k := at - 1
	for ; k >= 0; k-- {
		t := toks[k].Text
		if t == ";" || t == "{" || t == "}" {
			return nil
		}
		if t == "template" && k+1 < len(toks) && toks[k+1].Text == "<" {
			break
		}
	}
	if k < 0 {
		return nil
	}
	var out []tparam
	var cur []string
	flush := func() {
		if len(cur) == 0 {
			return
		}
		p := tparam{}
		words := cur
		if e := indexOf(cur, "="); e >= 0 {
			p.def = strings.Join(cur[e+1:], " ")
			words = cur[:e]
		}
		if fn := fnPointerName(words); fn != "" {
			// `void (*dequantize_func)(device const block_q *, short, …)`
			// (ggml's kernel_get_rows_q): a function as a value parameter
			p.name, p.fn = fn, true
			p.ctype = strings.Join(words, " ")
			out = append(out, p)
			cur = nil
			return
		}
		if len(words) > 0 {
			p.name = words[len(words)-1]
			p.isType = words[0] == "typename" || words[0] == "class"
			p.pack = slices.Contains(words, ".") // the lexer splits "..." into dots
			p.ctype = strings.Join(words[:len(words)-1], " ")
		}
		out = append(out, p)
		cur = nil
	}
	depth := 0
	for j := k + 1; j < at; j++ {
		t := toks[j].Text
		switch {
		case t == "<" || t == "(":
			depth++
			if depth == 1 {
				continue
			}
		case t == ">" || t == ")":
			depth--
			if depth == 0 {
				flush()
				return out
			}
		case t == "," && depth == 1:
			flush()
			continue
		}
		cur = append(cur, t)
	}
	return out
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// bodyOf is the tokens of the entry's body (between its braces); nil for
// a declaration without one.
func bodyOf(toks []csrc.Token, at int) []csrc.Token {
	if at < 0 {
		return nil
	}
	close := csrc.Matching(toks, at+1)
	for j := close + 1; j < len(toks); j++ {
		switch toks[j].Text {
		case ";":
			return nil
		case "{":
			end := csrc.Matching(toks, j)
			return toks[j+1 : end]
		}
	}
	return nil
}

// access is how a kernel body uses one pointer parameter.
type access struct {
	reads, writes bool
	// escapes: the pointer itself is passed on (to a function, a cast, an
	// address) in a way the scaffold cannot follow.
	escapes bool
}

// accessOf follows name through body: element reads and writes, directly
// or through local pointers initialised from it (`float* row = out + i*C`).
func accessOf(body []csrc.Token, name string) access {
	var a access
	aliases := map[string]bool{name: true}
	for i := 0; i < len(body); i++ {
		t := body[i]
		if t.Kind != csrc.Ident || !aliases[t.Text] || i > 0 && (body[i-1].Text == "." || body[i-1].Text == ">") {
			continue
		}
		prev := tokText(body, i-1)
		if i+1 < len(body) && body[i+1].Text == "[" {
			after := csrc.Matching(body, i+1) + 1
			for tokText(body, after) == "[" { // acc[n][i][d]: a packed accessor's (or an array's) elements
				after = csrc.Matching(body, after) + 1
			}
			for tokText(body, after) == "." {
				after += 2 // p[i].x
			}
			switch {
			case prev == "&" && strings.HasPrefix(tokText(body, i-3), "atomic"):
				a.reads, a.writes = true, true
			case prev == "&" && strings.HasPrefix(tokText(body, i-3), "__st"):
				a.writes = true
			case prev == "&":
				a.escapes = true
			default:
				classify(&a, body, i, after)
			}
			i = after - 1
			continue
		}
		if prev == "*" && derefPosition(body, i-1) {
			classify(&a, body, i-1, i+1)
			continue
		}
		if alias := aliasTarget(body, i); alias != "" {
			aliases[alias] = true
			continue
		}
		a.escapes = true
	}
	return a
}

// classify records an element access spanning body[from:to) by the
// operator that follows (and precedes) it.
func classify(a *access, body []csrc.Token, from, to int) {
	op, next := tokText(body, to), tokText(body, to+1)
	before2 := tokText(body, from-2) + tokText(body, from-1)
	switch {
	case before2 == "++" || before2 == "--" || op+next == "++" || op+next == "--":
		a.reads, a.writes = true, true
	case op == "=" && next != "=":
		a.writes = true
	case strings.Contains("+-*/%&|^", op) && op != "" && next == "=":
		a.reads, a.writes = true, true
	default:
		a.reads = true
	}
}

// derefPosition says whether the '*' at body[k] is a unary dereference
// (not a multiplication).
func derefPosition(body []csrc.Token, k int) bool {
	p := tokText(body, k-1)
	if p == "" {
		return true
	}
	if p == ")" || p == "]" {
		return false
	}
	last := body[k-1]
	return last.Kind != csrc.Ident && last.Kind != csrc.Number
}

// aliasTarget: body[i] is the pointer in `T* alias = <expr with it>;` (or
// `alias = …` of an earlier such alias): the alias's name, else "".
func aliasTarget(body []csrc.Token, i int) string {
	k := i - 1
	for ; k >= 0; k-- {
		t := body[k].Text
		if t == ";" || t == "{" || t == "}" || t == "," && k > 0 && body[k-1].Text != ")" {
			return ""
		}
		if t == "=" && k >= 2 && body[k-1].Kind == csrc.Ident && body[k-2].Text == "*" {
			if t2 := tokText(body, k+1); t2 == "=" {
				return ""
			}
			return body[k-1].Text
		}
		if t == "(" {
			return "" // an argument of a call or a cast
		}
	}
	return ""
}

func tokText(toks []csrc.Token, i int) string {
	if i < 0 || i >= len(toks) {
		return ""
	}
	return toks[i].Text
}

// constant is a block-size-like macro or constant of the source.
type constant struct {
	name    string
	value   int
	line    int
	guarded bool // #ifndef NAME around its #define: a knob can set it
	what    string
	expr    string // a #define's value when it is an expression, as written
}

var (
	// anyDefineRE is an object-like #define with a value (a trailing //
	// comment dropped)
	anyDefineRE = regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_]\w*)\s+((?:[^/\n]|/[^/*])+?)\s*(?://.*)?$`)
	defineRE    = regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_]\w*)\s+\(?\s*(\d+)\s*\)?\s*(?://.*)?$`)
	ifndefRE    = regexp.MustCompile(`^\s*#\s*(?:ifndef\s+([A-Za-z_]\w*)|if\s+!\s*defined\s*\(?\s*([A-Za-z_]\w*))`)
	// constantRE is a file-scope integer constant (at the line's start, so
	// not a function's local): `constexpr int kThreads = 128;`, with its
	// qualifiers in either order (torchvision's `int const threadsPerBlock
	// = sizeof(unsigned long long) * 8;`); the value is evaluated
	constantRE = regexp.MustCompile(`^((?:(?:static|constexpr|const|inline|__device__|__constant__)\s+)*)(?:int|unsigned|unsigned\s+int|size_t|uint|uint32_t|int32_t)\s+((?:const|constexpr)\s+)?([A-Za-z_]\w*)\s*=\s*([^;{}]+?)\s*;`)
	// blockLike are the names of a group's thread count.
	blockLike = regexp.MustCompile(`(?i)^(k_?)?(block(_?size|_?dim|_?threads)?|blocksize|wg(_?size)?|workgroup(_?size)?|threadgroup(_?size)?|num_?threads|n_?threads|threads(_?per_?(block|group))?|tpb|group_?size)$`)
)

// blockConstants are the source's block-size-like #defines and file-scope
// integer constants, in source order.
func blockConstants(src string) []constant {
	var out []constant
	for _, cn := range fileConstants(src) {
		if blockLike.MatchString(cn.name) {
			out = append(out, cn)
		}
	}
	return out
}

// fileConstants are the source's integer #defines and file-scope integer
// constants (`#define NT 256`, `constexpr int kThreads = 128;`), in source
// order.
func fileConstants(src string) []constant {
	var out []constant
	guarded := map[string]bool{}
	// every object-like #define's value, for those that are expressions of
	// others (exllamav2's `#define NUM_THREADS (NUM_WARPS * WARP_SIZE)`)
	macros := map[string]string{}
	for _, l := range strings.Split(src, "\n") {
		if m := anyDefineRE.FindStringSubmatch(l); m != nil {
			macros[m[1]] = m[2]
		}
	}
	for i, l := range strings.Split(src, "\n") {
		if m := ifndefRE.FindStringSubmatch(l); m != nil {
			guarded[m[1]+m[2]] = true
			continue
		}
		var m []string
		what := "#define"
		if m = defineRE.FindStringSubmatch(l); m == nil {
			if c := constantRE.FindStringSubmatch(l); c != nil && (strings.Contains(c[1], "const") || c[2] != "") {
				v, ok := csrc.IntConst(c[4], macros)
				if !ok || v <= 0 || v > math.MaxInt32 {
					continue
				}
				m, what = []string{c[0], c[3], strconv.FormatInt(v, 10)}, "constant"
				if !intLiteral.MatchString(c[4]) {
					m = append(m, c[4])
				}
			} else {
				d := anyDefineRE.FindStringSubmatch(l)
				if d == nil {
					continue
				}
				v, ok := csrc.IntConst(d[2], macros)
				if !ok || v <= 0 || v > math.MaxInt32 {
					continue
				}
				m = []string{d[0], d[1], strconv.FormatInt(v, 10), d[2]}
			}
		}
		v, err := strconv.Atoi(m[2])
		if err != nil || v <= 0 {
			continue
		}
		cn := constant{name: m[1], value: v, line: i + 1, guarded: what == "#define" && guarded[m[1]], what: what}
		if len(m) > 3 {
			cn.expr = m[3]
		}
		out = append(out, cn)
	}
	return out
}

// mentions says whether the tokens use name.
func mentions(toks []csrc.Token, name string) bool {
	for _, t := range toks {
		if t.Text == name {
			return true
		}
	}
	return false
}
