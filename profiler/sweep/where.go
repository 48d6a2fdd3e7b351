package sweep

import (
	"errors"
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// A `where:` filter is an expression of profiler/expr, the language of
// user-kernel manifests: integer arithmetic (/ truncates, as in C),
// comparisons, && || !, min/max, cdiv(a, b) and sizeof(T) over the
// family's knobs and dims (integers), flags (true/false) and T, the
// spec's dtype.

// whereVars are the names a filter of a family with schema sc may use.
func whereVars(sc profiler.Schema) expr.Vars {
	v := expr.Vars{"T": expr.DType}
	for _, p := range sc.Knobs {
		v[p.Name] = expr.Int
	}
	for _, p := range sc.Dims {
		v[p.Name] = expr.Int
	}
	for _, f := range sc.Flags {
		v[f.Name] = expr.Bool
	}
	return v
}

// whereEnv is the values of a spec (defaults applied) for its filters.
func whereEnv(sc profiler.Schema, s profiler.Spec) map[string]any {
	e := map[string]any{"T": string(s.DType)}
	for _, p := range sc.Knobs {
		e[p.Name] = s.Knobs[p.Name]
	}
	for _, p := range sc.Dims {
		e[p.Name] = s.Dims[p.Name]
	}
	for _, f := range sc.Flags {
		e[f.Name] = s.Flags[f.Name]
	}
	return e
}

// exprPos is where an expression starts in the sweep file.
type exprPos struct {
	line, col int
}

// compileWhere compiles one filter of kernel; errors are InputErrors at the
// file:line:col of what is wrong, naming the unknown name and the known
// ones.
func compileWhere(file, field, src, kernel string, sc profiler.Schema, at exprPos) (*expr.Program, error) {
	// Where.File is left empty so that the message says "at column N" of
	// the expression: the file:line:col leads the InputError.
	p, err := expr.Compile(src, whereVars(sc), expr.Where{Field: "where"})
	if err != nil {
		return nil, whereError(file, field, kernel, at, err)
	}
	if !p.IsBool() {
		return nil, &profiler.InputError{File: file, Line: at.line, Col: at.col, Field: field, Msg: fmt.Sprintf("'%s' is a number, not true or false: a filter keeps the specs it is true for, so write a comparison such as '%s > 0'", src, src)}
	}
	return p, nil
}

func whereError(file, field, kernel string, at exprPos, err error) error {
	e := &profiler.InputError{File: file, Line: at.line, Col: at.col, Field: field, Msg: err.Error()}
	var ee *expr.Error
	if errors.As(err, &ee) {
		e.Msg = ee.Msg // e leads with the position; ee's own would repeat it
		if ee.Off > 0 && at.line > 0 {
			e.Col += ee.Off
		}
		if len(ee.Msg) > 12 && ee.Msg[:12] == "unknown name" {
			e.Msg += fmt.Sprintf(" (the knobs, dims and flags of %s, and T, the dtype)", kernel)
		}
	}
	return e
}
