package scaffold

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// guardWords are the tokens any of which, in a kernel's body, count as a
// bound check: a comparison (`if (i < n)`, `for (…; i < n; …)`, `if (gid
// >= n) return`), or a clamp of the index. Conservative: a body with any of
// them is taken as guarded, whatever it compares.
var guardWords = map[string]bool{"<": true, "<=": true, ">": true, ">=": true, "min": true, "max": true, "clamp": true, "fmin": true, "fmax": true, "umin": true, "umax": true}

// unguarded says whether a kernel's body has no bound check at all
// (Apple's add_arrays: `result[index] = inA[index] + inB[index];`): every
// thread of the grid reads and writes its element. A body that hands its
// work to code elsewhere (guardedByCall) may check there: not unguarded.
func unguarded(sig csrc.Signature, body []csrc.Token) bool {
	if len(body) == 0 {
		return false
	}
	for _, t := range body {
		if guardWords[t.Text] || strings.ContainsAny(t.Text, "<>") {
			return false
		}
	}
	return !guardedByCall(sig, body)
}

// guardedByCall says whether a kernel's body calls code that may hold its
// bound check: a functor or function parameter (Apex's `callable(chunk,
// …)`), a lambda (`for_each(n, [=] __device__ (int i) {…})`), or a
// function other than a math builtin given the thread index (a variable
// made from threadIdx/blockIdx, or a Metal position parameter).
// Conservative: any such call counts as a guard.
func guardedByCall(sig csrc.Signature, body []csrc.Token) bool {
	params := map[string]bool{}
	index := map[string]bool{"threadIdx": true, "blockIdx": true}
	for _, p := range sig.Params {
		params[p.Name] = true
		if strings.Contains(p.Attr, "thread_position") || strings.Contains(p.Attr, "thread_index") {
			index[p.Name] = true
		}
	}
	for i, t := range body {
		if t.Text == "[" && i+1 < len(body) && strings.Contains("=&]", body[i+1].Text) && (i == 0 || body[i-1].Kind != csrc.Ident && body[i-1].Text != "]" && body[i-1].Text != ")") {
			return true // a lambda's capture list, not a subscript
		}
		if t.Kind != csrc.Ident || i+1 >= len(body) {
			continue
		}
		if body[i+1].Text == "=" && i+2 < len(body) && mentionsAny(body[i+2:endOfStatement(body, i+2)], index) {
			index[t.Text] = true // int i = blockIdx.x * blockDim.x + threadIdx.x;
			continue
		}
		if body[i+1].Text != "(" || notACall[t.Text] || builtinCall.MatchString(t.Text) {
			continue
		}
		if params[t.Text] {
			return true
		}
		if close := csrc.Matching(body, i+1); close > i && mentionsAny(body[i+2:close], index) {
			return true
		}
	}
	return false
}

// mentionsAny says whether toks name one of names.
func mentionsAny(toks []csrc.Token, names map[string]bool) bool {
	for _, t := range toks {
		if t.Kind == csrc.Ident && names[t.Text] {
			return true
		}
	}
	return false
}

// endOfStatement is the index of the `;` (or `,` at depth 0) ending the
// expression that starts at from, or len(toks).
func endOfStatement(toks []csrc.Token, from int) int {
	depth := 0
	for i := from; i < len(toks); i++ {
		switch toks[i].Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth--; depth < 0 {
				return i
			}
		case ";", ",":
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks)
}

// notACall are the keywords and casts an identifier before `(` may be.
var notACall = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"alignof": true, "decltype": true, "static_cast": true, "reinterpret_cast": true, "const_cast": true, "__launch_bounds__": true}

// builtinCall matches the math functions, intrinsics, conversions and
// scalar or vector type casts that take an index without checking it.
var builtinCall = regexp.MustCompile(`^(__\w+|atomic\w+|(u?char|u?short|u?int|u?long|u?longlong|float|double|half|bfloat|bool)[1-4]?|make_\w+|int\d+_t|uint\d+_t|size_t|unsigned|signed|long|short|char|` +
	`f?(abs|min|max|sqrt|rsqrt|cbrt|exp|exp2|expm1|log|log2|log10|log1p|pow|sin|cos|tan|sinh|cosh|tanh|asin|acos|atan|atan2|floor|ceil|round|rint|trunc|erf|erfc|fma|fmod|isnan|isinf|isfinite|copysign|hypot|select|saturate|mix|step|sign)f?|` +
	`as_type|static_cast|reinterpret_cast)$`)

// cdivGrid matches a one-dimensional grid of the ceiling division the
// scaffold writes: cdiv(N * C, WG).
var cdivGrid = regexp.MustCompile(`^cdiv\((.+), ([^,()]+)\)$`)

// ruleForUnguarded adds, for a kernel without a bound check, the rule that
// its grid covers the elements exactly (`N % WG == 0`) when the grid is a
// ceiling division, and says so on the grid line; otherwise a TODO there.
func ruleForUnguarded(p *plan, k *kernelScan, d *dispatch) {
	if len(k.loopBounds) > 0 || !unguarded(k.sig, k.body) { // a grid-stride loop's bound is its check
		return
	}
	m := cdivGrid.FindStringSubmatch(d.grid[0])
	if m == nil || d.grid[1] != "1" || d.grid[2] != "1" {
		d.gridComment = withTODO(d.gridComment, p.todo(fmt.Sprintf("%s has no bound check: the grid × threads must be exactly the elements it covers", k.sig.Entry),
			"%s compares its thread index with no size (no bound check): its grid × threads must cover the elements exactly; add a rule that says so", k.sig.Entry))
		return
	}
	size, per := m[1], m[2]
	if strings.ContainsAny(size, "+-") {
		size = "(" + size + ")"
	}
	rule := fmt.Sprintf("%s %% %s == 0", size, per)
	for _, r := range p.rules {
		if r.body == rule {
			return
		}
	}
	p.rules = append(p.rules, part{body: rule, comment: fmt.Sprintf("%s has no bound check (no comparison of its thread index): the grid must cover %s exactly", k.sig.Entry, m[1])})
}
