package csrc

import (
	"strconv"
	"strings"
)

// Ambiguous is the value ObjectMacros gives a macro defined again with
// other text and no #undef between (`#ifdef FAST #define N 4 #else #define
// N 8 #endif`): which one the compiler sees is not known before it runs,
// so IntConst fails on it and callers keep the name as written.
const Ambiguous = "\x00"

// ObjectMacros are the live object-like #defines of the scans, name →
// replacement text (pass headers first, the main file last). A name
// defined again with the same text keeps it; with other text it is
// Ambiguous; an #undef forgets it.
func ObjectMacros(files ...*File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, d := range f.Directives {
			switch {
			case d.Dead:
			case d.Kind == "define" && d.Defines != "" && d.Replacement == "":
				if was, seen := out[d.Defines]; seen && was != d.Value {
					out[d.Defines] = Ambiguous
				} else {
					out[d.Defines] = d.Value
				}
			case d.Kind == "undef" && len(d.Tests) == 1:
				delete(out, d.Tests[0])
			}
		}
	}
	return out
}

// IntConst evaluates text as an integer constant expression of C, the
// object-like macros expanded: integer literals (decimal, hex, with U/L
// suffixes), parentheses, unary + - ~, the binary operators * / % + -
// << >> & ^ |, and sizeof of a built-in type (sizeofType). ok is false
// for anything else (a name no macro defines, a cast, a division by
// zero), so a caller keeps the text as it is.
// "(WARP_COUNT * HISTOGRAM256_BIN_COUNT)" with WARP_COUNT 6 and
// HISTOGRAM256_BIN_COUNT 256 is 1536.
func IntConst(text string, macros map[string]string) (v int64, ok bool) {
	var toks []string
	if !expandTokens(text, macros, 0, &toks) {
		return 0, false
	}
	p := &intParser{toks: joinShifts(toks)}
	v, ok = p.binary(0)
	return v, ok && p.i == len(p.toks)
}

// expandTokens appends the tokens of text with its macros expanded,
// nesting at most 16 deep (a macro that names itself fails).
func expandTokens(text string, macros map[string]string, depth int, out *[]string) bool {
	if depth > 16 {
		return false
	}
	toks := Tokenize(text)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != Ident {
			*out = append(*out, t.Text)
			continue
		}
		if t.Text == "sizeof" { // sizeof(unsigned long long): torchvision's threadsPerBlock
			n, end := sizeofType(toks, i+1)
			if n == 0 {
				return false
			}
			*out = append(*out, strconv.Itoa(n))
			i = end
			continue
		}
		body, ok := macros[t.Text]
		if !ok || !expandTokens(body, macros, depth+1, out) {
			return false
		}
	}
	return true
}

// sizeofType is the size in bytes of the built-in type named in the
// parentheses that open at toks[at] (`(unsigned long long)`, `(float4)`,
// `(const int*)`), as the device sees it (64-bit long and pointers), and
// the index of the closing parenthesis; 0 for anything else (a type of the
// source, an expression), which mltop cannot size.
func sizeofType(toks []Token, at int) (int, int) {
	if at >= len(toks) || toks[at].Text != "(" {
		return 0, 0
	}
	var words []string
	pointer := false
	for i := at + 1; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.Text == ")":
			if pointer && len(words) > 0 {
				return 8, i
			}
			n, _ := TypeBytes(strings.Join(words, " "))
			return n, i
		case t.Text == "*" && !pointer:
			pointer = true
		case t.Kind != Ident || pointer:
			return 0, 0
		case t.Text != "const" && t.Text != "volatile":
			words = append(words, t.Text)
		}
	}
	return 0, 0
}

// typeBytes are the device sizes of C's arithmetic types (their words
// with int dropped where another word says the size), the fixed-width
// ones, CUDA's and Metal's 16-bit floats, PyTorch's, and common vectors.
var typeBytes = map[string]int{
	"char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
	"short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "bfloat": 2,
	"c10::Half": 2, "at::Half": 2, "c10::BFloat16": 2, "at::BFloat16": 2,
	"int": 4, "unsigned": 4, "signed": 4, "float": 4, "int32_t": 4, "uint32_t": 4, "uint": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4,
	"long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "double": 8, "int64_t": 8, "uint64_t": 8,
	"size_t": 8, "ptrdiff_t": 8, "intptr_t": 8, "uintptr_t": 8, "float2": 8, "int2": 8, "uint2": 8,
	"float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16,
}

// TypeBytes is the size in bytes, as the device sees it, of a built-in
// C, CUDA or Metal element type as a declaration writes it (`float`,
// `unsigned long int`, `__half2`, `bfloat`, `c10::Half`); ok is false for
// a type it does not know (a template parameter, a struct of the source).
// sizeof in source constants, __constant__ tables and shared-array
// suggestions size types by it.
func TypeBytes(t string) (n int, ok bool) {
	words := strings.Fields(t)
	if len(words) > 1 && words[0] == "signed" {
		words = words[1:] // signed long long: long long
	}
	if len(words) > 1 && words[len(words)-1] == "int" {
		words = words[:len(words)-1] // unsigned long int: unsigned long
	}
	n, ok = typeBytes[strings.Join(words, " ")]
	return n, ok
}

// joinShifts joins the tokens "<" "<" into "<<" and ">" ">" into ">>"
// (Tokenize splits them; a constant expression has no other use for two).
func joinShifts(toks []string) []string {
	var out []string
	for i := 0; i < len(toks); i++ {
		if (toks[i] == "<" || toks[i] == ">") && i+1 < len(toks) && toks[i+1] == toks[i] {
			out = append(out, toks[i]+toks[i])
			i++
			continue
		}
		out = append(out, toks[i])
	}
	return out
}

// intParser evaluates the tokens by precedence climbing: IntConst's
// constant expressions, and (cond) the integer parts of an #if
// (condParser.arith), which add C's comparisons, `!`, `true`/`false` and
// macros by their values (a name without one, `defined` and a
// function-like macro's call fail).
type intParser struct {
	toks   []string
	i      int
	cond   bool
	values map[string]int64 // cond: the macros' integer values
}

// binaryLevels are C's binary operators of a constant expression, loosest
// first; condLevels add the comparisons an #if also evaluates.
var (
	binaryLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}}
	condLevels   = [][]string{{"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}}
)

func (p *intParser) levels() [][]string {
	if p.cond {
		return condLevels
	}
	return binaryLevels
}

func (p *intParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *intParser) binary(level int) (int64, bool) {
	levels := p.levels()
	if level == len(levels) {
		return p.unary()
	}
	a, ok := p.binary(level + 1)
	for ok {
		op := p.peek()
		if !contains(levels[level], op) {
			return a, true
		}
		p.i++
		var b int64
		if b, ok = p.binary(level + 1); !ok {
			return 0, false
		}
		if a, ok = intOp(op, a, b); !ok {
			return 0, false
		}
	}
	return 0, false
}

func (p *intParser) unary() (int64, bool) {
	switch t := p.peek(); {
	case t == "-" || t == "+" || t == "~" || p.cond && t == "!":
		p.i++
		v, ok := p.unary()
		switch t {
		case "-":
			v = -v
		case "~":
			v = ^v
		case "!":
			v = bit(v == 0)
		}
		return v, ok
	case t == "(":
		p.i++
		v, ok := p.binary(0)
		if !ok || p.peek() != ")" {
			return 0, false
		}
		p.i++
		return v, true
	case t == "":
		return 0, false
	case p.cond && isIdentByte(t[0]):
		p.i++
		switch {
		case t == "true" || t == "false":
			return bit(t == "true"), true
		case t == "defined" || p.peek() == "(": // a function-like macro's call
			return 0, false
		}
		v, ok := p.values[t]
		return v, ok
	default:
		p.i++
		return intLiteral(t)
	}
}

func bit(c bool) int64 {
	if c {
		return 1
	}
	return 0
}

// intLiteral reads 256, 0x100, 5U, 64ul.
func intLiteral(t string) (int64, bool) {
	t = strings.TrimRight(t, "uUlL")
	v, err := strconv.ParseInt(t, 0, 64)
	return v, err == nil
}

// intOp applies a binary operator of condLevels (those of binaryLevels
// and C's comparisons, 1 or 0).
func intOp(op string, a, b int64) (int64, bool) {
	switch op {
	case "==":
		return bit(a == b), true
	case "!=":
		return bit(a != b), true
	case "<":
		return bit(a < b), true
	case ">":
		return bit(a > b), true
	case "<=":
		return bit(a <= b), true
	case ">=":
		return bit(a >= b), true
	case "|":
		return a | b, true
	case "^":
		return a ^ b, true
	case "&":
		return a & b, true
	case "<<", ">>":
		if b < 0 || b > 62 {
			return 0, false
		}
		if op == "<<" {
			return a << b, true
		}
		return a >> b, true
	case "+":
		return a + b, true
	case "-":
		return a - b, true
	case "*":
		return a * b, true
	}
	if b == 0 { // / and %
		return 0, false
	}
	if op == "/" {
		return a / b, true
	}
	return a % b, true
}

func contains(ops []string, op string) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}
