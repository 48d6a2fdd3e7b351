// Package expr is mltop's expression language: integer and float arithmetic
// over a spec's named dims, knobs and flags, comparisons and boolean logic
// for rules, and a few functions kernel engineers need (sizeof(T), min, max,
// cdiv). User-kernel manifests use it for shapes, grids, budgets, work
// models and rules; sweep `where:` filters use it too.
//
// It is built on github.com/expr-lang/expr with two changes of meaning that
// match C: `/` between two integers divides and truncates (use `a / 1.0`
// for a float quotient), and names must be declared up front, so that a
// typo is an error that names it, where it is and what is known.
//
// Compile once, evaluate many times: a Program is safe for concurrent use.
package expr

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/mltop/mltop/profiler"
)

// Kind is the type a name has in expressions.
type Kind int

const (
	Int   Kind = iota // dims, knobs
	Bool              // flags
	Float             // float-valued names (rare)
	DType             // the dtype T: only useful as sizeof(T)
)

// Where says where an expression comes from, for messages:
// "grid[0] 'cdiv(colz, 4)' at kernel.yaml:14:12".
type Where struct {
	Field string // e.g. "grid[0]", "rules[1]", "buffers[X].shape[0]"
	File  string
	Line  int
	Col   int // column of the expression's first character (1-based)
}

func (w Where) String() string {
	if w.File == "" {
		return w.Field
	}
	if w.Line == 0 {
		return w.File
	}
	return fmt.Sprintf("%s:%d:%d", w.File, w.Line, w.Col)
}

// at shifts the position by off runes into the expression (single-line).
func (w Where) at(off int) string {
	if w.File == "" {
		return fmt.Sprintf("column %d", off+1)
	}
	if w.Line == 0 {
		return w.File
	}
	return fmt.Sprintf("%s:%d:%d", w.File, w.Line, w.Col+off)
}

// Vars declares the names an expression may use and their kinds.
type Vars map[string]Kind

// Names lists the declared names sorted, for messages.
func (v Vars) Names() []string {
	out := make([]string, 0, len(v))
	for n := range v {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Error is a compile or evaluation error with its position.
type Error struct {
	Where Where
	Src   string
	Msg   string
	// Off is the 0-based offset in Src of what the error is about (an
	// unknown name, a syntax error), or -1 when it is about the whole
	// expression; callers that hold a finer position than Where use it.
	Off int
}

// Error leads with where the error is (file:line:col, or the column in
// an expression that came from no file), then the message: the form of
// every input error.
func (e *Error) Error() string { return e.Where.at(max(e.Off, 0)) + ": " + e.Msg }

// Program is a compiled expression.
type Program struct {
	src   string
	where Where
	prog  *vm.Program
}

// Source is the expression's text.
func (p *Program) Source() string { return p.src }

// Where is where the expression came from.
func (p *Program) Where() Where { return p.where }

// functions beyond expr-lang's builtins min, max, abs, ceil, floor, round.
var functions = []expr.Option{
	expr.Function("cdiv", func(ps ...any) (any, error) {
		a, b := ps[0].(int), ps[1].(int)
		if b == 0 {
			return nil, errors.New("cdiv by zero")
		}
		q := a / b
		if a%b != 0 && (a < 0) == (b < 0) {
			q++
		}
		return q, nil
	}, new(func(int, int) int)),
	expr.Function("sizeof", func(ps ...any) (any, error) {
		switch ps[0].(string) {
		case "f16", "bf16":
			return 2, nil
		case "f32", "i32", "u32":
			return 4, nil
		case "f64", "i64":
			return 8, nil
		case "i8", "u8":
			return 1, nil
		}
		return nil, fmt.Errorf("sizeof(%q): unknown dtype", ps[0])
	}, new(func(string) int)),
	// log2 is exact, of a power of two: elsewhere `ceil(log2(n))` would
	// silently be the floor (a manifest for Megatron's softmax launched its
	// 64-wide variant for rows of 100 so). floor_log2 and ceil_log2 say
	// which one they mean.
	expr.Function("log2", func(ps ...any) (any, error) {
		a := ps[0].(int)
		n, err := floorLog2("log2", a)
		if err == nil && a != 1<<n {
			err = fmt.Errorf("log2(%d): %d is not a power of two (log2 is exact, an integer): write floor_log2(%d) = %d or ceil_log2(%d) = %d", a, a, a, n, a, n+1)
		}
		return n, err
	}, new(func(int) int)),
	expr.Function("floor_log2", func(ps ...any) (any, error) {
		return floorLog2("floor_log2", ps[0].(int))
	}, new(func(int) int)),
	expr.Function("ceil_log2", func(ps ...any) (any, error) {
		a := ps[0].(int)
		n, err := floorLog2("ceil_log2", a)
		if err == nil && a != 1<<n {
			n++
		}
		return n, err
	}, new(func(int) int)),
	expr.Function("idiv", func(ps ...any) (any, error) {
		a, b := ps[0].(int), ps[1].(int)
		if b == 0 {
			return nil, errors.New("integer division by zero")
		}
		return a / b, nil
	}, new(func(int, int) int)),
	expr.Operator("/", "idiv"),
	mathFunction("sqrt", math.Sqrt),
	mathFunction("exp", math.Exp),
	mathFunction("log", math.Log),
	expr.Function("pow", func(ps ...any) (any, error) {
		return checkedFloat("pow", math.Pow(toFloat(ps[0]), toFloat(ps[1])))
	}, new(func(float64, float64) float64), new(func(int, int) float64), new(func(int, float64) float64), new(func(float64, int) float64)),
	expr.DisableAllBuiltins(),
	expr.EnableBuiltin("min"),
	expr.EnableBuiltin("max"),
	expr.EnableBuiltin("abs"),
	expr.EnableBuiltin("ceil"),
	expr.EnableBuiltin("floor"),
	expr.EnableBuiltin("round"),
	expr.EnableBuiltin("int"),
	expr.EnableBuiltin("float"),
}

// floorLog2 is the largest n with 2^n <= a, of a positive integer a.
func floorLog2(name string, a int) (int, error) {
	if a <= 0 {
		return 0, fmt.Errorf("%s(%d): needs a positive integer", name, a)
	}
	n := 0
	for a > 1 {
		a >>= 1
		n++
	}
	return n, nil
}

// mathFunction is a float function of one number (an int is converted);
// a NaN or infinite result is an error naming the call.
func mathFunction(name string, fn func(float64) float64) expr.Option {
	return expr.Function(name, func(ps ...any) (any, error) {
		x := toFloat(ps[0])
		v, err := checkedFloat(name, fn(x))
		if err != nil {
			return nil, fmt.Errorf("%s(%g): %w", name, x, err)
		}
		return v, nil
	}, new(func(float64) float64), new(func(int) float64))
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func checkedFloat(name string, v float64) (any, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%s gives %g, not a finite number", name, v)
	}
	return v, nil
}

// Functions lists the functions expressions may call, for docs and messages.
var Functions = []string{"cdiv(a, b)", "sizeof(T)", "log2(n)", "floor_log2(n)", "ceil_log2(n)", "sqrt(x)", "exp(x)", "log(x)", "pow(x, y)", "min(a, b, …)", "max(a, b, …)", "abs(x)", "ceil(x)", "floor(x)", "round(x)", "int(x)", "float(x)"}

func sample(vars Vars) map[string]any {
	env := make(map[string]any, len(vars))
	for n, k := range vars {
		switch k {
		case Int:
			env[n] = 0
		case Bool:
			env[n] = false
		case Float:
			env[n] = 0.0
		case DType:
			env[n] = "f32"
		}
	}
	return env
}

type idents struct {
	names   []*ast.IdentifierNode
	callees map[ast.Node]bool
}

func (v *idents) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.IdentifierNode:
		v.names = append(v.names, x)
	case *ast.CallNode:
		v.callees[x.Callee] = true
	}
}

// Compile checks src against vars and compiles it. An unknown name is an
// error naming it, where it is and the names that are known.
func Compile(src string, vars Vars, w Where) (*Program, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Where: w, Src: src, Off: -1, Msg: fmt.Sprintf("empty expression in %s at %s: write a number or an expression over %s", w.Field, w, strings.Join(vars.Names(), ", "))}
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, wrap(err, src, w, "syntax error")
	}
	v := &idents{callees: map[ast.Node]bool{}}
	ast.Walk(&tree.Node, v)
	for _, id := range v.names {
		if v.callees[ast.Node(id)] {
			if !knownFunction(id.Value) {
				return nil, &Error{Where: w, Src: src, Off: id.Location().From, Msg: fmt.Sprintf("unknown function '%s' in %s '%s'; %sfunctions: %s", id.Value, w.Field, src, profiler.DidYouMean(id.Value, functionNames()), strings.Join(Functions, ", "))}
			}
			continue
		}
		if _, ok := vars[id.Value]; !ok {
			if hint := quoteDTypeHint(src, id, vars); hint != "" {
				return nil, &Error{Where: w, Src: src, Off: id.Location().From, Msg: fmt.Sprintf("'%s' in %s '%s' is a dtype, which is a string here: %s", id.Value, w.Field, src, hint)}
			}
			return nil, &Error{Where: w, Src: src, Off: id.Location().From, Msg: fmt.Sprintf("unknown name '%s' in %s '%s'; %sknown: %s", id.Value, w.Field, src, profiler.DidYouMean(id.Value, vars.Names()), strings.Join(vars.Names(), ", "))}
		}
	}
	opts := append([]expr.Option{expr.Env(sample(vars))}, functions...)
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, wrap(err, src, w, "")
	}
	return &Program{src: src, where: w, prog: prog}, nil
}

// quoteDTypeHint is what to write instead when the unknown name id is a
// dtype ('T == bf16' for 'T == "bf16"') and vars has a dtype name to
// compare it with: the expression with the dtype quoted, in the spelling
// T takes. "" otherwise.
func quoteDTypeHint(src string, id *ast.IdentifierNode, vars Vars) string {
	d, err := profiler.ParseBufferDType(id.Value)
	if err != nil || !slices.Contains(slices.Collect(maps.Values(vars)), DType) {
		return ""
	}
	quoted := strconv.Quote(string(d))
	fixed := quoted
	if from := id.Location().From; from >= 0 && strings.HasPrefix(src[from:], id.Value) {
		fixed = src[:from] + quoted + src[from+len(id.Value):]
	}
	return fmt.Sprintf("quote it, '%s' (in YAML, single quotes around the whole expression keep the double ones)", fixed)
}

// syntaxHint is a way out of a syntax error in src whose message is msg
// and which is at off: a lone = where == compares ("rows = 64").
func syntaxHint(msg, src string, off int) string {
	if !strings.Contains(msg, `Operator("=")`) {
		return ""
	}
	if off >= 0 && off < len(src) && src[off] == '=' {
		return fmt.Sprintf(": use == to compare, '%s'", src[:off]+"=="+src[off+1:])
	}
	return ": use == to compare"
}

// functionNames are the names of Functions ("cdiv", "sizeof", …).
func functionNames() []string {
	out := make([]string, len(Functions))
	for i, f := range Functions {
		out[i], _, _ = strings.Cut(f, "(")
	}
	return out
}

func knownFunction(name string) bool {
	for _, f := range Functions {
		if strings.HasPrefix(f, name+"(") {
			return true
		}
	}
	return false
}

func wrap(err error, src string, w Where, what string) error {
	msg := err.Error()
	off := -1
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
		off = fe.Column
	}
	hint := ""
	if what != "" {
		msg = what + ": " + msg
		hint = syntaxHint(msg, src, off)
	}
	if strings.Contains(msg, "mismatched types float64 and int") || strings.Contains(msg, "mismatched types int and float64") {
		hint = ": an operand is a float (`**`, `ceil`, `floor`, `round`, `sqrt`, `log`, `exp`, `pow` and `/` of a float give floats); wrap it in int(…), e.g. 'int(2 ** L) % 32'"
	}
	return &Error{Where: w, Src: src, Off: off, Msg: fmt.Sprintf("%s in %s '%s'%s", msg, w.Field, src, hint)}
}

// Eval evaluates the program with env (names → int, bool, float64 or a
// dtype string).
func (p *Program) Eval(env map[string]any) (any, error) {
	out, err := expr.Run(p.prog, env)
	if err != nil {
		return nil, wrap(err, p.src, p.where, "")
	}
	return out, nil
}

// Int evaluates to an integer; a float result must be integral.
func (p *Program) Int(env map[string]any) (int64, error) {
	v, err := p.Eval(env)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<62 {
			return int64(x), nil
		}
		return 0, p.errf("%s '%s' at %s is %g, not an integer: use cdiv(a, b), floor() or ceil()", p.where.Field, p.src, p.where, x)
	}
	return 0, p.errf("%s '%s' at %s is %v (%T), not a number", p.where.Field, p.src, p.where, v, v)
}

// Float evaluates to a number.
func (p *Program) Float(env map[string]any) (float64, error) {
	v, err := p.Eval(env)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, p.errf("%s '%s' at %s is %v (%T), not a number", p.where.Field, p.src, p.where, v, v)
}

// Bool evaluates a rule.
func (p *Program) Bool(env map[string]any) (bool, error) {
	v, err := p.Eval(env)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, p.errf("%s '%s' at %s is %v, not true or false: write a comparison such as 'cols %% 4 == 0'", p.where.Field, p.src, p.where, v)
	}
	return b, nil
}

func (p *Program) errf(format string, a ...any) error {
	return &Error{Where: p.where, Src: p.src, Off: -1, Msg: fmt.Sprintf(format, a...)}
}

// IsBool says whether the expression is true/false by its types (a rule,
// a filter), so that a caller can refuse `rows + 1` before evaluating it.
// An expression whose type is known only when it runs counts as bool.
func (p *Program) IsBool() bool {
	t := p.prog.Node().Type()
	return t == nil || t.Kind() == reflect.Bool || t.Kind() == reflect.Interface
}

// ResultKind is the kind of value the expression gives by its types: Int,
// Float or Bool; Float when the type is known only when it runs.
func (p *Program) ResultKind() Kind {
	t := p.prog.Node().Type()
	if t == nil {
		return Float
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return Int
	case reflect.Bool:
		return Bool
	}
	return Float
}

// Names lists the variables the expression uses, in order of appearance.
func (p *Program) Names() []string {
	tree, err := parser.Parse(p.src)
	if err != nil {
		return nil
	}
	v := &idents{callees: map[ast.Node]bool{}}
	ast.Walk(&tree.Node, v)
	var out []string
	for _, id := range v.names {
		if !v.callees[ast.Node(id)] && !slices.Contains(out, id.Value) {
			out = append(out, id.Value)
		}
	}
	return out
}
