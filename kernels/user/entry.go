package user

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler/expr"
)

// entryExpr is a dispatch's `entry:`, a C++ name expression: `kern`,
// `ns::kern`, `kern<floatX, 4>`, `kern<T, BLOCK * 2>`, `kern<T, {WG / 32}>`.
// Inside the template argument list the dtype name becomes the dtype's C
// type, knob, dim, flag and value names their values, and `{expr}` the
// expression's value; everything else is copied as it is.
type entryExpr struct {
	text    string      // as written
	name    string      // the name without template arguments: "ns::kern"
	args    []entryPart // the template argument list (between < and >)
	hasArgs bool
	scope   entryScope
	// casts: the top-level template arguments (by index) whose template
	// parameter is of an enum type of the source, to that type as the
	// entry's scope names it: a knob's integer there is cast to it, as C++
	// converts no integer to an enum implicitly (args_enum.go).
	casts map[int]string
}

// entryPart is a piece of the template argument list: text copied as it
// is, a name mltop gives a value, or an {expr}.
type entryPart struct {
	lit  string
	name string
	p    *expr.Program
}

// entryError is a malformed entry: Off is the byte offset in the entry.
type entryError struct {
	Off int
	Msg string
}

func (e *entryError) Error() string { return e.Msg }

// entryScope says what a name in an entry's template arguments is.
type entryScope struct {
	dtype    string            // the manifest's dtype name
	vars     expr.Vars         // knobs, dims, flags, values
	declared func(string) bool // the source uses the name (a type or constant of its own)
	// scopes: the namespaces the source declares a name in at namespace
	// scope ("" for file scope); nil when unknown
	scopes  func(string) []string
	compile func(src string, off int) (*expr.Program, error) // an {expr} at offset off
}

// cppWords are names an entry's template arguments may use as they are.
var cppWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`float double int unsigned signed long short char bool void true false
		half __half __half2 half2 __nv_bfloat16 __nv_bfloat162 bfloat bfloat16_t nv_bfloat16
		int8_t uint8_t int16_t uint16_t int32_t uint32_t int64_t uint64_t size_t uint sizeof
		float2 float3 float4 int2 int4 uint2 uint4`) {
		cppWords[w] = true
	}
}

// parseEntry reads an entry expression.
func parseEntry(text string, sc entryScope) (*entryExpr, error) {
	e := &entryExpr{text: text, scope: sc}
	i := skipSpace(text, 0)
	start := i
	for {
		j := identEnd(text, i)
		if j == i {
			if i == start {
				return nil, &entryError{i, fmt.Sprintf("entry %q does not start with a function name: write the kernel's C++ name, e.g. my_kernel, ns::my_kernel or my_kernel<T, 4>", text)}
			}
			return nil, &entryError{i, fmt.Sprintf("entry %q: a name must follow '::'", text)}
		}
		i = j
		if !strings.HasPrefix(text[i:], "::") {
			break
		}
		i += 2
	}
	e.name = text[start:i]
	i = skipSpace(text, i)
	if i == len(text) {
		return e, nil
	}
	if text[i] != '<' {
		return nil, &entryError{i, fmt.Sprintf("entry %q: unexpected %q after the name: template arguments go between < and >", text, text[i:])}
	}
	e.hasArgs = true
	end, err := e.readArgs(text, i+1, sc)
	if err != nil {
		return nil, err
	}
	if rest := strings.TrimSpace(text[end+1:]); rest != "" {
		return nil, &entryError{end + 1, fmt.Sprintf("entry %q: unexpected %q after the template arguments", text, rest)}
	}
	return e, nil
}

// readArgs reads the template argument list from i (just after the '<')
// to its closing '>', whose offset it returns.
func (e *entryExpr) readArgs(text string, i int, sc entryScope) (int, error) {
	depth := 1 // angle brackets
	parens := 0
	lit := strings.Builder{}
	flush := func() {
		if lit.Len() > 0 {
			e.args = append(e.args, entryPart{lit: lit.String()})
			lit.Reset()
		}
	}
	for i < len(text) {
		c := text[i]
		switch {
		case c == '{':
			close := strings.IndexByte(text[i:], '}')
			if close < 0 {
				return 0, &entryError{i, fmt.Sprintf("entry %q: '{' without its '}': write {expression}", text)}
			}
			p, err := sc.compile(text[i+1:i+close], i+1)
			if err != nil {
				return 0, err
			}
			flush()
			e.args = append(e.args, entryPart{p: p})
			i += close + 1
			continue
		case isIdentStart(c):
			j := identEnd(text, i)
			word := text[i:j]
			qualified := strings.HasPrefix(text[j:], "::") || i >= 2 && text[i-2:i] == "::"
			switch {
			case qualified || cppWords[word]:
				if qualified && (i < 2 || text[i-2:i] != "::") {
					lit.WriteString(enclosing(sc, e.name, word)) // ns::Traits, ns declared in the kernel's namespace
				}
				lit.WriteString(word)
			case word == sc.dtype || hasVar(sc.vars, word):
				flush()
				e.args = append(e.args, entryPart{name: word})
			case sc.declared != nil && sc.declared(word):
				if i < 2 || text[i-2:i] != "::" {
					lit.WriteString(enclosing(sc, e.name, word))
				}
				lit.WriteString(word)
			default:
				return 0, &entryError{i, fmt.Sprintf("entry %q: unknown name %s in the template arguments: known are the dtype name %s and %s (or a name the source or its local headers declare)", text, word, sc.dtype, strings.Join(sc.vars.Names(), ", "))}
			}
			i = j
			continue
		case c == '<':
			depth++
		case c == '>':
			if parens == 0 {
				depth--
				if depth == 0 {
					flush()
					return i, nil
				}
			}
		case c == '(':
			parens++
		case c == ')':
			parens--
			if parens < 0 {
				return 0, &entryError{i, fmt.Sprintf("entry %q: ')' without its '('", text)}
			}
		}
		lit.WriteByte(c)
		i++
	}
	return 0, &entryError{len(text), fmt.Sprintf("entry %q: unbalanced '<': the template argument list has no closing '>'", text)}
}

// enclosing is the qualifier ("at::native::") a name in the template
// arguments of kernel (as the entry writes it, "at::native::k") needs:
// NVRTC reads the entry as a name expression at file scope, where
// `dists<float>::two` is unknown when the source declares dists in the
// kernel's namespace. The name is looked up as C++ looks it up from the
// kernel's namespace: the innermost of that namespace and those around it
// that declares it; "" when file scope does or none does (a template
// parameter, a qualified or built-in name).
func enclosing(sc entryScope, kernel, word string) string {
	if sc.scopes == nil {
		return ""
	}
	k := strings.LastIndex(kernel, "::")
	if k < 0 {
		return ""
	}
	ns := kernel[:k]
	decl := sc.scopes(word)
	for ; ns != ""; ns = outer(ns) {
		if slices.Contains(decl, ns) {
			return ns + "::"
		}
	}
	return ""
}

// outer is the namespace around ns ("a" for "a::b", "" for "a").
func outer(ns string) string {
	if k := strings.LastIndex(ns, "::"); k >= 0 {
		return ns[:k]
	}
	return ""
}

func hasVar(v expr.Vars, name string) bool {
	_, ok := v[name]
	return ok
}

// render writes the entry for a spec: env holds its values, ctype is the
// dtype's C type in the source's language.
func (e *entryExpr) render(env map[string]any, dtypeName, ctype string) (string, error) {
	if !e.hasArgs {
		return e.name, nil
	}
	if len(e.casts) > 0 {
		return e.renderCast(env, dtypeName, ctype)
	}
	args, err := e.renderParts(e.args, env, dtypeName, ctype)
	if err != nil {
		return "", err
	}
	return e.name + "<" + args + ">", nil
}

// renderCast renders the entry argument by argument, casting a value
// alone (a knob, dim, flag or {expr}) at an enum parameter to its type:
// `scatter_kernel<float, (ReductionType)(4)>`.
func (e *entryExpr) renderCast(env map[string]any, dtypeName, ctype string) (string, error) {
	var out []string
	for i, arg := range e.topArgs() {
		s, err := e.renderParts(arg, env, dtypeName, ctype)
		if err != nil {
			return "", err
		}
		var vals []entryPart
		for _, p := range arg {
			if p.name != "" || p.p != nil || strings.TrimSpace(p.lit) != "" {
				vals = append(vals, p)
			}
		}
		if t := e.casts[i]; t != "" && len(vals) == 1 && (vals[0].p != nil || vals[0].name != "" && vals[0].name != dtypeName) {
			s = "(" + t + ")(" + strings.TrimSpace(s) + ")"
		}
		out = append(out, strings.TrimSpace(s))
	}
	return e.name + "<" + strings.Join(out, ", ") + ">", nil
}

// renderParts writes parts of the template argument list for a spec.
func (e *entryExpr) renderParts(parts []entryPart, env map[string]any, dtypeName, ctype string) (string, error) {
	var b strings.Builder
	for _, a := range parts {
		switch {
		case a.p != nil:
			v, err := a.p.Eval(env)
			if err != nil {
				return "", err
			}
			s, err := templateValue(v)
			if err != nil {
				return "", fmt.Errorf("entry %q: {%s} %v", e.text, a.p.Source(), err)
			}
			b.WriteString(s)
		case a.name == dtypeName:
			b.WriteString(ctype)
		case a.name != "":
			s, err := templateValue(env[a.name])
			if err != nil {
				return "", fmt.Errorf("entry %q: %s %v", e.text, a.name, err)
			}
			b.WriteString(s)
		default:
			b.WriteString(a.lit)
		}
	}
	return b.String(), nil
}

// templateValue writes a value as a C++ template argument.
func templateValue(v any) (string, error) {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10), nil
		}
		return "", fmt.Errorf("is %g: a template argument must be an integer or a bool", x)
	}
	return "", fmt.Errorf("is %v, which is not a template argument", v)
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func identEnd(s string, i int) int {
	if i >= len(s) || !isIdentStart(s[i]) {
		return i
	}
	for i < len(s) && (isIdentStart(s[i]) || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return i
}

// pinnedTypes maps the template parameters that the entry binds to a
// plain C type to that type: for `kern<T, T, float, {LOG2}>` over
// `template <typename in_t, typename out_t, typename acc_t, int L>` it is
// {acc_t: float}. A parameter `acc_t scale` is then a float, not the
// dtype: passed as the dtype, a half's two bytes would land in a float's
// four. Arguments naming the dtype, a knob or an {expr} pin nothing.
func (e *entryExpr) pinnedTypes(params []string) map[string]string {
	var pinned map[string]string
	for i, arg := range e.topArgs() {
		if i >= len(params) || strings.Contains(params[i], "...") {
			break
		}
		if t, ok := plainType(arg); ok {
			if pinned == nil {
				pinned = map[string]string{}
			}
			pinned[params[i]] = t
		}
	}
	return pinned
}

// pinnedClassTypes maps the template parameters that the entry binds to
// a type of the source's own (`TensorListMetadata<4>`, `AdamFunctor<float,
// int32_t>`, `Scale<T>`, `Lists<{NT * 2}>`) to that argument's parts: a
// by-value parameter of that template type is then that struct. An
// argument with the dtype name, a knob, a dim or an {expr} inside names a
// different type per spec (classDependsOnSpec); the caller renders it.
func (e *entryExpr) pinnedClassTypes(params []string) map[string][]entryPart {
	out := map[string][]entryPart{}
	for i, arg := range e.topArgs() {
		if i >= len(params) {
			break
		}
		if len(arg) == 0 || arg[0].lit == "" {
			continue // the dtype name or a value alone: no class
		}
		head, _, angle := strings.Cut(arg[0].lit, "<")
		name := strings.TrimSpace(head)
		if name == "" || identEnd(name, 0) != len(name) || classDependsOnSpec(arg) && !angle {
			continue
		}
		out[params[i]] = arg
	}
	return out
}

// classDependsOnSpec says whether a template argument reads the spec: the
// dtype name, a knob, dim, flag or value, or an {expr}.
func classDependsOnSpec(parts []entryPart) bool {
	return slices.ContainsFunc(parts, func(p entryPart) bool { return p.lit == "" })
}

// literalText is a template argument without names mltop gives: as written.
func literalText(parts []entryPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.lit)
	}
	return strings.TrimSpace(b.String())
}

// topArgs splits the template argument list at its top-level commas.
func (e *entryExpr) topArgs() [][]entryPart {
	args := [][]entryPart{nil}
	angles, parens := 0, 0 // a '>' inside parentheses is a comparison
	for _, p := range e.args {
		if p.lit == "" {
			args[len(args)-1] = append(args[len(args)-1], p)
			continue
		}
		start := 0
		for i, c := range p.lit {
			switch {
			case c == '(':
				parens++
			case c == ')':
				parens--
			case c == '<' && parens == 0:
				angles++
			case c == '>' && parens == 0:
				angles--
			case c == ',' && angles == 0 && parens == 0:
				{
					args[len(args)-1] = append(args[len(args)-1], entryPart{lit: p.lit[start:i]})
					args = append(args, nil)
					start = i + 1
				}
			}
		}
		args[len(args)-1] = append(args[len(args)-1], entryPart{lit: p.lit[start:]})
	}
	return args
}

// plainType is the type an argument names, if it is only words: a C
// scalar type, or a name of the source (a typedef: typeScope keeps it only
// if it resolves to a C scalar type).
func plainType(arg []entryPart) (string, bool) {
	var words []string
	for _, p := range arg {
		if p.lit == "" {
			return "", false
		}
		words = append(words, strings.Fields(p.lit)...)
	}
	t := strings.Join(words, " ")
	if _, ok := cScalarKinds[t]; ok {
		return t, true
	}
	if _, ok := elemTypes[t]; ok {
		return t, true
	}
	if len(words) == 1 && identEnd(t, 0) == len(t) {
		return t, true
	}
	return "", false
}
