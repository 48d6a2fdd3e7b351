package scaffold

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// enumerator is one name of an enum and its value.
type enumerator struct {
	name  string
	value int64
}

// enumValues reads the enumerators of the enum the source defines as
// name (`enum ReductionType { SUM, MEAN, … }`, pytorch_scatter; `enum
// class Mode : int { A = 1, B = 4 }`), each with its value: the one its
// `= expr` gives (an integer expression of literals and earlier
// enumerators), else one more than the one before. ok is false when the
// source defines no such enum or a value cannot be read.
func enumValues(toks []csrc.Token, name string) (out []enumerator, ok bool) {
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	for _, d := range csrc.EnumDefs(toks) {
		if d.Name == name {
			return enumBody(toks, d.Open, d.End)
		}
	}
	return nil, false
}

// enumBody reads the enumerators between toks[open] "{" and toks[end] "}".
func enumBody(toks []csrc.Token, open, end int) ([]enumerator, bool) {
	var out []enumerator
	known := map[string]string{}
	next := int64(0)
	for k := open + 1; k < end; {
		if toks[k].Kind != csrc.Ident {
			return nil, false
		}
		e := enumerator{name: toks[k].Text, value: next}
		k++
		if k < end && toks[k].Text == "=" {
			var expr []string
			depth := 0
			for k++; k < end && (depth > 0 || toks[k].Text != ","); k++ {
				switch toks[k].Text {
				case "(":
					depth++
				case ")":
					depth--
				}
				expr = append(expr, toks[k].Text)
			}
			v, ok := csrc.IntConst(strings.Join(expr, " "), known)
			if !ok {
				return nil, false
			}
			e.value = v
		}
		out = append(out, e)
		known[e.name] = strconv.FormatInt(e.value, 10)
		next = e.value + 1
		if k < end {
			if toks[k].Text != "," {
				return nil, false
			}
			k++
		}
	}
	return out, len(out) > 0
}

// enumKnob is the knob body for a template parameter of an enum type:
// the enumerators' values, the first (or the parameter's default, an
// enumerator's name) the default, their names in the doc. ok is false
// when ctype is no enum of the source that mltop can read.
func (c *context) enumKnob(ctype, def string) (body, comment string, ok bool) {
	ctype = strings.TrimSpace(strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(ctype), " :: ", "::"), "const "))
	def = strings.ReplaceAll(def, " :: ", "::")
	if ctype == "" || c.intType(ctype) || ctype == "bool" {
		return "", "", false
	}
	es, ok := enumValues(c.toks, ctype)
	if !ok {
		return "", "", false
	}
	vals := make([]string, len(es))
	names := make([]string, len(es))
	dflt := es[0].value
	if i := strings.LastIndex(def, "::"); i >= 0 {
		def = def[i+2:]
	}
	seen := map[int64]bool{}
	var uniq []string
	for i, e := range es {
		vals[i] = strconv.FormatInt(e.value, 10)
		names[i] = fmt.Sprintf("%d %s", e.value, e.name)
		if e.name == def {
			dflt = e.value
		}
		if !seen[e.value] {
			seen[e.value] = true
			uniq = append(uniq, vals[i])
		}
	}
	body = fmt.Sprintf("{values: [%s], default: %d, doc: %q}", strings.Join(uniq, ", "), dflt, ctype+" "+strings.Join(names, ", "))
	return body, "the enumerators of " + ctype + "; drop those the kernel does not take", true
}
