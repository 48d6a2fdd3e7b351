package scaffold

import (
	"regexp"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file reads the template arguments a launch leaves to deduction
// (Apex's `multi_tensor_apply_kernel<<<blocks, BLOCK_SIZE>>>(chunk,
// noop, tl, AdamFunctor<float, float>(), beta1, …, mode, decay)`) from the
// launching function: a name's declared type (`TensorListMetadata<4> tl;`,
// the parameter `float beta1`), a temporary's type (`AdamFunctor<float,
// float>()`), a cast's type (`(adamMode_t)mode`) or a literal's.

// deducedTemplates is the template arguments of the first launch of sig
// that passes none, read from its arguments' types (launchTemplate.args,
// one per template parameter, a pack's types last; "" where a type
// parameter no by-value parameter takes cannot be read). False when the
// launch deduces no source struct and no pack: a scalar template type
// stays the dtype's, as without a launch.
func (c *context) deducedTemplates(sig csrc.Signature, tmpl []tparam) (launchTemplate, bool) {
	if len(tmpl) == 0 {
		return launchTemplate{}, false
	}
	lb, ok := findLaunch(c.src, sig.Entry)
	if !ok || lb.args == nil {
		return launchTemplate{}, false
	}
	before := c.src[:lineOffset(c.src, lb.line)]
	params := sig.Params
	var args []string
	useful := false
	for _, tp := range tmpl {
		if tp.pack {
			at := packParamIndex(params)
			if at < 0 || at > len(lb.args) {
				return launchTemplate{}, false
			}
			for _, a := range lb.args[at:] {
				t := c.argType(before, a)
				if t == "" {
					return launchTemplate{}, false
				}
				args = append(args, t)
			}
			useful = true
			break
		}
		if !tp.isType {
			return launchTemplate{}, false // a value parameter: not deduced from a type
		}
		t := ""
		if at := byValueParam(params, tp.name); at >= 0 && at < len(lb.args) {
			t = c.argType(before, lb.args[at])
		}
		if t != "" && c.sourceStruct(t) {
			useful = true
		}
		args = append(args, t)
	}
	if !useful {
		return launchTemplate{}, false
	}
	return launchTemplate{args: args, line: lb.line}, true
}

// packParamIndex is the index of the parameter pack among params, -1 if none.
func packParamIndex(params []csrc.Param) int {
	for i, p := range params {
		if strings.Contains(p.Type, ". . .") {
			return i
		}
	}
	return -1
}

// byValueParam is the index of the first parameter that takes template
// type name by value or by const reference (`T tl`, `const U& f`), -1 if none.
func byValueParam(params []csrc.Param, name string) int {
	for i, p := range params {
		if !p.Pointer && strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.Type), "&")) == name {
			return i
		}
	}
	return -1
}

var (
	castPrefix   = regexp.MustCompile(`^\(\s*((?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^()]*>)?(?:\s+[A-Za-z_]\w*)*)\s*\)\s*[\w(]`)
	staticCast   = regexp.MustCompile(`^static_cast\s*<\s*(.+?)\s*>\s*\(`)
	temporary    = regexp.MustCompile(`^([A-Za-z_][\w:]*(?:\s*<.*>)?)\s*(?:\(\s*\)|\{\s*\})$`)
	floatLiteral = regexp.MustCompile(`^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?[fF]$|^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?\d+[eE][-+]?\d+$`)
)

// argType is the C type of a launch argument as the launching code
// (before, the source up to the launch's line) declares it; "" when
// mltop cannot read it.
func (c *context) argType(before, arg string) string {
	arg = strings.TrimSpace(arg)
	switch {
	case arg == "true" || arg == "false":
		return "bool"
	case intLiteral.MatchString(arg):
		return "int"
	case floatLiteral.MatchString(arg):
		if strings.ContainsAny(arg, "fF") {
			return "float"
		}
		return "double"
	case identifier.MatchString(arg):
		return c.resolved(declaredType(before, arg))
	}
	if m := staticCast.FindStringSubmatch(arg); m != nil {
		return c.resolved(m[1])
	}
	if m := castPrefix.FindStringSubmatch(arg); m != nil {
		return c.resolved(m[1])
	}
	if m := temporary.FindStringSubmatch(arg); m != nil {
		name, _, _ := strings.Cut(m[1], "<")
		if _, isTypedef := c.typedefs[strings.TrimSpace(name)]; isTypedef || c.sourceStruct(m[1]) {
			return c.resolved(m[1])
		}
	}
	return ""
}

// resolved is a type with const dropped and a typedef of the source
// replaced by what it names when that is a struct of the source
// (`Adam32` for `typedef AdamFunctor<float, float> Adam32;`), spaces
// normalized.
func (c *context) resolved(t string) string {
	t = strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(t), "const ")), " ")
	if u, ok := c.typedefs[t]; ok && u != "" && c.sourceStruct(u) {
		return typeText(u)
	}
	return t
}

// typeText writes a type's tokens as people write them (`ns::F<float,
// int>`, not `ns :: F < float , int >`).
func typeText(t string) string {
	var b strings.Builder
	prev := ""
	for _, tok := range csrc.Tokenize(t) {
		tight := strings.Contains("<>,:*&", tok.Text[:1]) || prev == "" || prev == "<" || prev == "::"
		if !tight {
			b.WriteByte(' ')
		}
		b.WriteString(tok.Text)
		if tok.Text == "," {
			b.WriteByte(' ')
			prev = "<" // no second space
			continue
		}
		prev = tok.Text
	}
	return b.String()
}

// declaredType is the type of the last declaration of name in before (a
// local `TensorListMetadata<4> tl;`, a parameter `float beta1,` or
// `const Lists<4>& tl`), "" when
// there is none.
func declaredType(before, name string) string {
	re := regexp.MustCompile(`(?:^|[;{}(,])\s*(?:const\s+)?((?:unsigned\s+|signed\s+|long\s+)*[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?)(?:\s*(&&?|\*+)\s*|\s+)` + regexp.QuoteMeta(name) + `\s*(?:[;=,)\[{(]|$)`)
	all := re.FindAllStringSubmatch(before, -1)
	for i := len(all) - 1; i >= 0; i-- {
		if t := all[i][1]; !notAType[t] {
			if strings.HasPrefix(all[i][2], "*") {
				t += all[i][2] // a pointer; a reference is its referent's type
			}
			return t
		}
	}
	return ""
}

// notAType are the words that may stand before a name where a type would.
var notAType = map[string]bool{"return": true, "else": true, "case": true, "goto": true, "new": true, "delete": true,
	"throw": true, "struct": true, "class": true, "enum": true, "typename": true, "using": true, "namespace": true}
