package user

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/internal/yamlmsg"
	"github.com/mltop/mltop/profiler/expr"
)

// Error is bad input in a manifest: file:line:col, the field and what to do.
type Error struct {
	File      string
	Line, Col int
	Field     string
	Msg       string
	cause     error // the *expr.Error this one reports, for errors.As
}

// Unwrap is the expression error this one reports, if any.
func (e *Error) Unwrap() error { return e.cause }

// exprError reports an expression's error as a manifest error: its
// position once (file:line:col of what it is about) and its message, so
// that what prints it with its own file: prefix does not print the path
// twice. Other errors pass through.
func exprError(err error, field string) error {
	var ee *expr.Error
	if err == nil || !errors.As(err, &ee) || ee.Where.File == "" {
		return err
	}
	return &Error{File: ee.Where.File, Line: ee.Where.Line, Col: ee.Where.Col + max(ee.Off, 0), Field: field, Msg: ee.Msg, cause: ee}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// IsError reports whether err is a manifest error (bad input, exit 2).
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// doc positions: YAML paths → line:col, for messages.
type doc struct {
	file string
	ast  *ast.File
}

func (d *doc) pos(path string) (line, col int, quoted bool) {
	n := d.node(path)
	if n == nil {
		return 0, 0, false
	}
	tk := n.GetToken()
	if tk == nil {
		return 0, 0, false
	}
	q := false
	if sn, ok := n.(*ast.StringNode); ok && sn.Token != nil {
		t := sn.Token.Type.String()
		q = strings.Contains(t, "Quote")
	}
	return tk.Position.Line, tk.Position.Column, q
}

// node is the node at path, or nil.
func (d *doc) node(path string) ast.Node {
	if d.ast == nil {
		return nil
	}
	p, err := yaml.PathString(path)
	if err != nil {
		return nil
	}
	n, err := p.FilterFile(d.ast)
	if err != nil {
		return nil
	}
	return n
}

// item is the path and field of item i of the list at path and field:
// "$.dtypes[1]" and "dtypes[1]", or the list's own when its one value is
// written without a list (`dtypes: f8`), so an error names no index the
// file does not have.
func (d *doc) item(path, field string, i int) (string, string) {
	if _, one := d.node(path).(ast.ScalarNode); one {
		return path, field
	}
	return fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%s[%d]", field, i)
}

func (d *doc) err(path, field, format string, a ...any) error {
	l, c, _ := d.pos(path)
	return &Error{File: d.file, Line: l, Col: c, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// where is the position of an expression at path for the expr package.
func (d *doc) where(path, field string) expr.Where {
	l, c, q := d.pos(path)
	if q {
		c++
	}
	return expr.Where{Field: field, File: d.file, Line: l, Col: c}
}

// keys lists a mapping's keys in file order.
func (d *doc) keys(path string) []string {
	var out []string
	switch m := d.node(path).(type) {
	case *ast.MappingNode:
		for _, v := range m.Values {
			out = append(out, v.Key.String())
		}
	case *ast.MappingValueNode:
		out = append(out, m.Key.String())
	}
	return out
}

var posRE = regexp.MustCompile(`^\[(\d+):(\d+)\]\s*(.*)$`)

func yamlErr(file string, err error) error {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	e := &Error{File: file, Msg: first}
	if m := posRE.FindStringSubmatch(first); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Col, _ = strconv.Atoi(m[2])
		e.Msg = m[3]
	}
	if strings.Contains(e.Msg, "unknown field") {
		e.Msg += ": check the spelling; the manifest keys are " + manifestKeys() + " (docs/own-kernels.md)"
	}
	e.Msg = yamlmsg.Plain(e.Msg)
	return e
}

func strictUnmarshal(src []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the file is not valid YAML for a manifest (the parser failed: %v)", p)
		}
	}()
	return yaml.UnmarshalWithOptions(src, v, yaml.Strict())
}
