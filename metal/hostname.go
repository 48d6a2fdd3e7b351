package metal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Instantiation is the template a [[host_name("…")]] explicit
// instantiation makes a kernel of, and its template arguments as written
// ("float", "4").
type Instantiation struct {
	Template string
	Args     []string
}

var hostNameAttr = regexp.MustCompile(`\btemplate\s*\[\[\s*host_name\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)\s*\]\]`)

// HostNames finds the kernels a Metal source instantiates from templates
// under a host name: `template [[host_name("k_float_4")]] [[kernel]]
// decltype(k<float, 4>) k<float, 4>;` (or the older `… [[kernel]] void
// k<float, 4>(params…);`, or `… kernel k_t k<float, 4>;` with k_t a
// typedef of the function type), including those a macro list writes, after
// expanding the source's #defines. The host name is what Metal's
// newFunctionWithName: finds and what a manifest names as the entry. A
// host name used twice is an error.
func HostNames(src string) (map[string]Instantiation, error) {
	text := expandMacros(src)
	out := map[string]Instantiation{}
	for _, m := range hostNameAttr.FindAllStringSubmatchIndex(text, -1) {
		host, err := joinStringLiterals(text[m[2]:m[3]])
		if err != nil {
			return nil, err
		}
		tmpl, args, ok := instantiated(text[m[1]:])
		if !ok {
			return nil, fmt.Errorf("[[host_name(%q)]]: cannot read the template it instantiates: write `[[kernel]] decltype(name<args>) name<args>;`", host)
		}
		if prev, dup := out[host]; dup {
			return nil, fmt.Errorf("host name %q instantiates both %s<%s> and %s<%s>: give each its own name", host, prev.Template, strings.Join(prev.Args, ", "), tmpl, strings.Join(args, ", "))
		}
		out[host] = Instantiation{Template: tmpl, Args: args}
	}
	return out, nil
}

// HostNameLines is the line (1-based) of each [[host_name]] in src: where
// the attribute is written, or the line of the macro invocation that
// writes it (MLX's `instantiate_scan_helper(sum_float32_float32, …)`,
// whose host names the macro pastes together).
func HostNameLines(src string) map[string]int {
	text := expandMacros(src)
	out := map[string]int{}
	for _, m := range hostNameAttr.FindAllStringSubmatchIndex(text, -1) {
		if host, err := joinStringLiterals(text[m[2]:m[3]]); err == nil {
			out[host] = 1 + strings.Count(text[:m[0]], "\n")
		}
	}
	return out
}

// joinStringLiterals reads adjacent literals ("k_" "float") as one string.
func joinStringLiterals(s string) (string, error) {
	var b strings.Builder
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		end := skipLiteral(s, 0)
		part, err := strconv.Unquote(s[:end])
		if err != nil {
			return "", fmt.Errorf("host_name %s: %v", s[:end], err)
		}
		b.WriteString(part)
		s = s[end:]
	}
	return b.String(), nil
}

var (
	leadingAttrs = regexp.MustCompile(`^\s*(?:(?:\[\[[^\]]*\]\]|kernel)\s*)*`)
	decltypeForm = regexp.MustCompile(`^decltype\s*\(\s*([\w:]+)\s*<`)
	// `void name<args>(params…);`, or a function type named by a typedef
	// (`typedef decltype(k<float>) k_t;` … `kernel k_t k<half>;`, as ggml does)
	declarationForm = regexp.MustCompile(`^(?:const\s+)?[A-Za-z_][\w:]*\s+([\w:]+)\s*<`)
)

// instantiated reads `decltype(name<args>) …;`, `void name<args>(…);` or
// `kernel_t name<args>;` (kernel_t a typedef of the kernel's type) at the
// start of s, after its attributes.
func instantiated(s string) (string, []string, bool) {
	s = s[len(leadingAttrs.FindString(s)):]
	m := decltypeForm.FindStringSubmatchIndex(s)
	if m == nil {
		m = declarationForm.FindStringSubmatchIndex(s)
	}
	if m == nil {
		return "", nil, false
	}
	args, _, ok := templateArgs(s[m[1]-1:])
	if !ok {
		return "", nil, false
	}
	return s[m[2]:m[3]], args, true
}

// templateArgs splits `<a, b<c, d>, e>` at its top-level commas, and
// gives the offset of its closing '>'. A '>' inside parentheses is a
// comparison (`(N > 2)`), not a closing bracket; ok is false when a ';' or
// '{' comes first or nothing closes the list.
func templateArgs(s string) (args []string, end int, ok bool) {
	angles, parens, start := 0, 0, 1
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == ';' || c == '{':
			return nil, 0, false
		case c == '(':
			parens++
		case c == ')':
			parens--
		case parens > 0:
		case c == '<':
			angles++
		case c == '>' && angles > 0:
			angles--
		case c == '>':
			if a := strings.Join(strings.Fields(s[start:i]), " "); a != "" || len(args) > 0 {
				args = append(args, a)
			}
			return args, i, true
		case c == ',' && angles == 0:
			args = append(args, strings.Join(strings.Fields(s[start:i]), " "))
			start = i + 1
		}
	}
	return nil, 0, false
}

// TemplateParam is one parameter of a kernel template: `typename T`,
// `int N = 4`.
type TemplateParam struct {
	Kind    string // "typename", "int", "bool", …
	Name    string
	Default string // "" when none
}

// TemplateParams reads the `template <…>` in front of the kernel
// template name (`template <typename T, int N> [[kernel]] void name(`).
func TemplateParams(src, name string) ([]TemplateParam, error) {
	params, found, err := templateParams(expandMacros(src), name)
	if !found {
		return nil, fmt.Errorf("no kernel template `template <…> [[kernel]] void %s(…)` in the source", name)
	}
	return params, err
}

// templateParams reads the parameters of template name in text (macros
// expanded); found is false when text has no such template.
func templateParams(text, name string) (params []TemplateParam, found bool, err error) {
	re := regexp.MustCompile(`\btemplate\s*<([^;{]*?)>\s*((?:(?:\[\[[^\]]*\]\]|kernel|static|inline)\s*)*)void\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	var m []string
	for _, c := range re.FindAllStringSubmatch(text, -1) {
		if strings.Contains(c[2], "kernel") { // not a device helper of the same name
			m = c
			break
		}
	}
	if m == nil {
		return nil, false, nil
	}
	parts, _, _ := templateArgs("<" + m[1] + ">")
	for _, p := range parts {
		decl, def, _ := strings.Cut(p, "=")
		f := strings.Fields(decl)
		if len(f) < 2 {
			return nil, true, fmt.Errorf("template %s: cannot read parameter %q", name, p)
		}
		params = append(params, TemplateParam{Kind: strings.Join(f[:len(f)-1], " "), Name: f[len(f)-1], Default: strings.TrimSpace(def)})
	}
	return params, true, nil
}

// Bindings maps each template parameter of the instantiated template to
// its argument (or its default), so the kernel's parameter types can be
// read concretely: with `template <typename T, int N>` and k<float, 4>,
// T → float and N → 4.
func (in Instantiation) Bindings(src string) (map[string]string, error) {
	params, err := TemplateParams(src, in.Template)
	if err != nil {
		return nil, err
	}
	if len(in.Args) > len(params) {
		return nil, fmt.Errorf("%s<%s> gives %d template arguments, the template takes %d", in.Template, strings.Join(in.Args, ", "), len(in.Args), len(params))
	}
	out := map[string]string{}
	for i, p := range params {
		switch {
		case i < len(in.Args):
			out[p.Name] = in.Args[i]
		case p.Default != "":
			out[p.Name] = p.Default
		default:
			return nil, fmt.Errorf("%s<%s> leaves template parameter %s without a value", in.Template, strings.Join(in.Args, ", "), p.Name)
		}
	}
	return out, nil
}

var identifier = regexp.MustCompile(`[A-Za-z_]\w*`)

// SubstituteTemplateArgs rewrites whole identifiers of a type or
// expression as binds says: "const device T*" with T → float is
// "const device float*".
func SubstituteTemplateArgs(s string, binds map[string]string) string {
	return identifier.ReplaceAllStringFunc(s, func(w string) string {
		if v, ok := binds[w]; ok {
			return v
		}
		return w
	})
}
