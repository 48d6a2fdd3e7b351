package user

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// This file reads array values in args: `args: [inp, out, [rows, cols],
// cols]`. An array value fills a Metal `constant T*` parameter (MLX's
// `const constant int* shape`), one element per expression, each as T;
// metal.Bind sets them at the parameter's index as scalars named
// "shape[0]", "shape[1]", ….

// argList is a dispatch's args: strings, or lists of expressions, which
// it keeps as "[a, b]" (args reads them back with arrayText).
type argList []string

// UnmarshalYAML accepts what yamlmsg.StringList does, plus an item that is
// itself a list of scalars.
func (l *argList) UnmarshalYAML(n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		var one yamlmsg.StringList
		if err := one.UnmarshalYAML(n); err != nil {
			return err
		}
		*l = argList(one)
		return nil
	}
	out := argList{}
	for _, v := range seq.Values {
		if m, isMap := v.(*ast.MappingNode); isMap { // a struct value (args_struct.go)
			s, err := structText(m)
			if err != nil {
				return err
			}
			out = append(out, s)
			continue
		}
		inner, isList := v.(*ast.SequenceNode)
		if !isList {
			var s string
			if err := yaml.NodeToValue(v, &s); err != nil {
				tk := v.GetToken()
				return fmt.Errorf("[%d:%d] want a buffer name, an expression or a list of expressions here, got %s", tk.Position.Line, tk.Position.Column, strings.TrimSpace(v.String()))
			}
			out = append(out, s)
			continue
		}
		var elems []string
		if err := yaml.NodeToValue(inner, &elems); err != nil {
			tk := v.GetToken()
			return fmt.Errorf("[%d:%d] an array value is a list of expressions, as [rows, cols]; got %s", tk.Position.Line, tk.Position.Column, strings.TrimSpace(v.String()))
		}
		out = append(out, "["+strings.Join(elems, ", ")+"]")
	}
	*l = out
	return nil
}

// arrayText splits an array value "[a, b]" into its expressions, at the
// commas outside parentheses; ok is false for anything else.
func arrayText(a string) (elems []string, ok bool) {
	a = strings.TrimSpace(a)
	if !strings.HasPrefix(a, "[") || !strings.HasSuffix(a, "]") {
		return nil, false
	}
	inner := a[1 : len(a)-1]
	depth, start := 0, 0
	for i, c := range inner {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				elems = append(elems, strings.TrimSpace(inner[start:i]))
				start = i + 1
			}
		}
	}
	if last := strings.TrimSpace(inner[start:]); last != "" || len(elems) > 0 {
		elems = append(elems, last)
	}
	return elems, true
}

// arrayArg compiles an array value's expressions.
func (bl *builder) arrayArg(text string, elems []string, path, field string) (uarg, error) {
	if len(elems) == 0 {
		return uarg{}, bl.d.err(path, field, "%s is an empty array value: give at least one expression, as [rows, cols]", text)
	}
	a := uarg{text: text}
	for j, e := range elems {
		p, err := bl.compile(e, fmt.Sprintf("%s[%d]", path, j), fmt.Sprintf("%s[%d]", field, j))
		if err != nil {
			return uarg{}, err
		}
		a.elems = append(a.elems, p)
	}
	return a, nil
}

// bindArray checks an array value against its parameter: only a Metal
// `constant T*` of a scalar type takes one (or `constant T name[n]`, then
// with n elements).
func (bl *builder) bindArray(a uarg, prm csrc.Param, up uparam, apath, afield, file string, sig csrc.Signature) (uparam, error) {
	pointee := strings.Join(strings.Fields(strings.NewReplacer("const", " ", "metal::", "").Replace(prm.Pointee)), " ")
	kind, scalar := cScalarKinds[pointee]
	if !prm.Pointer || !isConstantSpace(prm) || !scalar || kind == profiler.ScalarF64 {
		return up, bl.d.err(apath, afield, "array value %s goes to parameter `%s` of %s:%d: an array value fills only a Metal `constant T*` parameter of a scalar type (as `const constant int* shape`); give a buffer or an expression here", a.text, describe(prm), file, sig.Line)
	}
	if n, ok := declaredElems(prm.Extents); ok && n != int64(len(a.elems)) {
		return up, bl.d.err(apath, afield, "array value %s has %d elements, but parameter %s of %s:%d is declared %s: give %d%s", a.text, len(a.elems), prm.Name, file, sig.Line, bracketed(prm.Extents), n, rowMajor(prm.Extents))
	}
	up.kind = kind
	return up, nil
}

// declaredElems is the element count of an array parameter's extents
// (`[2][3]`: 6); ok false when one is not a constant mltop can read.
func declaredElems(extents []string) (n int64, ok bool) {
	if len(extents) == 0 {
		return 0, false
	}
	n = 1
	for _, x := range extents {
		v, isConst := csrc.IntConst(x, nil)
		if !isConst || v <= 0 {
			return 0, false
		}
		n *= v
	}
	return n, true
}

func bracketed(extents []string) string { return "[" + strings.Join(extents, "][") + "]" }

// rowMajor says how a multi-dimensional parameter's elements are listed
// (the declaration [2][3] is 6 of them).
func rowMajor(extents []string) string {
	if len(extents) < 2 {
		return ""
	}
	return ", in row-major order (the last index varies fastest)"
}

// arrayScalars evaluates an array value as its parameter's elements,
// named "param[k]" as metal.Bind finds them.
func arrayScalars(up uparam, a uarg, e map[string]any) ([]profiler.Scalar, error) {
	var out []profiler.Scalar
	for k, p := range a.elems {
		v, err := p.Eval(e)
		if err != nil {
			return nil, err
		}
		sc, err := profiler.ScalarOf(up.kind, fmt.Sprintf("%s[%d]", up.param.Name, k), v)
		if err != nil {
			return nil, fmt.Errorf("element %d (%s): %v (C type %s)", k, p.Source(), err, up.param.Pointee)
		}
		out = append(out, sc)
	}
	return out, nil
}
