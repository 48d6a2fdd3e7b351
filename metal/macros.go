package metal

import (
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// macroDef is one #define: function-like when params is not nil.
type macroDef struct {
	params   []string // "..." last for a variadic macro
	body     string
	function bool
}

// CompilerMacros are the macros mltop reads a Metal source's #if
// conditions with, as the MSL emulation compiles it (`mltop check`, `check
// --run`): Metal 3.1 with its native bfloat (__HAVE_BFLOAT__, which
// metal_stdlib's __METAL_VERSION__ 310 goes with). candle's unary.metal
// defines its instance list with bf16 under `#if defined(__HAVE_BFLOAT__)`
// and without in the #else: read with every branch live, the #else's
// definition won, no bf16 host name was found, and mltop added a second
// instance of it. Known: defined or not; the values decide comparisons
// (`#if __METAL_VERSION__ >= 220`).
func CompilerMacros() (known csrc.Macros, values map[string]int64) {
	return csrc.Macros{"__METAL__": true, "__METAL_VERSION__": true, "__HAVE_BFLOAT__": true},
		map[string]int64{"__METAL__": 1, "__METAL_VERSION__": 310, "__HAVE_BFLOAT__": 1}
}

// expandMacros runs the part of the C preprocessor that MLX-style
// instantiation lists need: object- and function-like #defines (with #,
// ## and __VA_ARGS__) expanded through the text. Other directives
// (#include, …) are dropped, not evaluated; #if conditions on literals and
// on the compiler's macros (CompilerMacros) leave out the code the
// compiler would not see (ggml keeps an older variant of a kernel, with
// the same host names, under `#if 0`; candle its bf16 instances under
// `#if defined(__HAVE_BFLOAT__)` with a #else without them); a condition
// on any other macro keeps every branch. The result is for finding
// declarations, not for compiling.
func expandMacros(src string) string {
	src = joinContinued(csrc.BlankComments(src))
	defs := map[string]macroDef{}
	var text strings.Builder
	var conds csrc.Conds
	conds.Known, conds.Values = CompilerMacros()
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "#") {
			if !conds.Dead() {
				text.WriteString(l)
			}
			text.WriteString("\n")
			continue
		}
		t = strings.TrimSpace(t[1:])
		conds.Directive(t)
		if conds.Dead() {
			text.WriteString("\n")
			continue
		}
		if rest, ok := strings.CutPrefix(t, "define"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			name, def := parseDefine(strings.TrimSpace(rest))
			if name != "" {
				defs[name] = def
			}
		}
		text.WriteString("\n")
	}
	return expandText(text.String(), defs, map[string]bool{}, 0)
}

// joinContinued joins each line that ends in a backslash to the next,
// as the preprocessor does, and puts the line endings it removed after
// the joined line: every line keeps its number, so a kernel a macro
// writes is reported at the line that invokes the macro (candle's
// `INDEX_OP(is_u32_f32, uint32_t, float)`), not lines above it.
func joinContinued(src string) string {
	if !strings.Contains(src, "\\\n") {
		return src
	}
	var b strings.Builder
	owed := 0
	for _, l := range strings.SplitAfter(src, "\n") {
		if body, ok := strings.CutSuffix(l, "\\\n"); ok {
			b.WriteString(body)
			b.WriteByte(' ')
			owed++
			continue
		}
		b.WriteString(l)
		if strings.HasSuffix(l, "\n") {
			b.WriteString(strings.Repeat("\n", owed))
			owed = 0
		}
	}
	return b.String()
}

// parseDefine reads `NAME(a, b) body` or `NAME body`.
func parseDefine(s string) (string, macroDef) {
	i := 0
	for i < len(s) && isIdentByte(s[i]) {
		i++
	}
	name := s[:i]
	if i < len(s) && s[i] == '(' {
		end := strings.IndexByte(s[i:], ')')
		if end < 0 {
			return "", macroDef{}
		}
		var params []string
		for _, p := range strings.Split(s[i+1:i+end], ",") {
			if p = strings.TrimSpace(p); p != "" {
				params = append(params, p)
			}
		}
		return name, macroDef{params: params, body: strings.TrimSpace(s[i+end+1:]), function: true}
	}
	return name, macroDef{body: strings.TrimSpace(s[i:])}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// expandText replaces macro uses in text, rescanning each replacement with
// the macro itself disabled (as C does), at most 32 levels deep.
func expandText(text string, defs map[string]macroDef, active map[string]bool, depth int) string {
	if depth > 32 || len(defs) == 0 {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		if c == '"' || c == '\'' {
			j := skipLiteral(text, i)
			b.WriteString(text[i:j])
			i = j
			continue
		}
		if !isIdentByte(c) || c >= '0' && c <= '9' {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(text) && isIdentByte(text[j]) {
			j++
		}
		word := text[i:j]
		def, ok := defs[word]
		if !ok || active[word] {
			b.WriteString(word)
			i = j
			continue
		}
		body := def.body
		if def.function {
			k := j
			for k < len(text) && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n') {
				k++
			}
			if k >= len(text) || text[k] != '(' {
				b.WriteString(word)
				i = j
				continue
			}
			args, end := macroArgs(text, k)
			if end < 0 {
				b.WriteString(text[i:])
				break
			}
			body = substitute(def, args, defs, active, depth)
			j = end
		}
		active[word] = true
		expanded := expandText(body, defs, active, depth+1)
		delete(active, word)
		if lines := strings.Count(text[i:j], "\n"); lines > 0 || strings.Contains(expanded, "\n") {
			// an invocation over several lines: its expansion on the
			// first, the line endings after it, so later lines keep
			// their numbers
			expanded = strings.ReplaceAll(expanded, "\n", " ") + strings.Repeat("\n", lines)
		}
		b.WriteString(expanded)
		i = j
	}
	return b.String()
}

// skipLiteral returns the index after the string or char literal at i.
func skipLiteral(s string, i int) int {
	q := s[i]
	for i++; i < len(s) && s[i] != q; i++ {
		if s[i] == '\\' {
			i++
		}
	}
	return min(i+1, len(s))
}

// macroArgs splits the argument list that opens at s[open] == '(' at its
// top-level commas and returns the index after the closing ')'.
func macroArgs(s string, open int) ([]string, int) {
	var args []string
	depth, start := 0, open+1
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			i = skipLiteral(s, i) - 1
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return append(args, strings.TrimSpace(s[start:i])), i + 1
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil, -1
}

// substitute puts args into a function-like macro's body: #p stringises
// the raw argument, a ## b pastes raw arguments, other uses get the
// argument expanded first.
func substitute(def macroDef, args []string, defs map[string]macroDef, active map[string]bool, depth int) string {
	val := map[string]string{}
	for i, p := range def.params {
		switch {
		case p == "...":
			if i < len(args) {
				val["__VA_ARGS__"] = strings.Join(args[i:], ", ")
			} else {
				val["__VA_ARGS__"] = ""
			}
		case i < len(args):
			val[p] = args[i]
		default:
			val[p] = ""
		}
	}
	body := def.body
	var out strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"' || c == '\'':
			j := skipLiteral(body, i)
			out.WriteString(body[i:j])
			i = j
		case c == '#' && i+1 < len(body) && body[i+1] == '#':
			// paste: drop the operator and the blanks around it
			s := strings.TrimRight(out.String(), " \t")
			out.Reset()
			out.WriteString(s)
			i += 2
			for i < len(body) && (body[i] == ' ' || body[i] == '\t') {
				i++
			}
		case c == '#':
			j := i + 1
			for j < len(body) && (body[j] == ' ' || body[j] == '\t') {
				j++
			}
			k := j
			for k < len(body) && isIdentByte(body[k]) {
				k++
			}
			if v, ok := val[body[j:k]]; ok {
				out.WriteString(strconv.Quote(strings.Join(strings.Fields(v), " ")))
				i = k
				continue
			}
			out.WriteByte(c)
			i++
		case isIdentByte(c):
			j := i
			for j < len(body) && isIdentByte(body[j]) {
				j++
			}
			word := body[i:j]
			v, ok := val[word]
			switch {
			case !ok:
				out.WriteString(word)
			case nextToPaste(body, i, j):
				out.WriteString(v)
			default:
				out.WriteString(expandText(v, defs, active, depth+1))
			}
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String()
}

// nextToPaste says whether body[i:j] is an operand of ##.
func nextToPaste(body string, i, j int) bool {
	before := strings.TrimRight(body[:i], " \t")
	after := strings.TrimLeft(body[j:], " \t")
	return strings.HasSuffix(before, "##") || strings.HasPrefix(after, "##")
}
