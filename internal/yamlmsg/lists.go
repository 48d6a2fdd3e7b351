package yamlmsg

import (
	"fmt"
	"math"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/profiler"
)

// The list types below are YAML values that may be written as one value
// or as a list: `dtypes: f32` is `dtypes: [f32]`. Sweep files and kernel
// manifests use the same ones, so a list reads alike in both. Their
// errors carry the node's position as "[line:col] message", the form the
// loaders' error parsers read.

// IntList is one int or a list of ints.
type IntList []int

// UnmarshalYAML accepts `32` and `[16, 32]`.
func (l *IntList) UnmarshalYAML(n ast.Node) error {
	if err := wholeNumbers(n); err != nil {
		return err
	}
	return unmarshalList(n, (*[]int)(l), "an integer or a list of integers")
}

// wholeNumbers refuses a number with a fraction where an integer goes (n,
// or each value of a list n): the YAML decoder would truncate 64.5 to 64
// and run a spec nobody asked for.
func wholeNumbers(n ast.Node) error {
	vals := []ast.Node{n}
	if s, ok := n.(*ast.SequenceNode); ok {
		vals = s.Values
	}
	for _, v := range vals {
		if f, ok := v.(*ast.FloatNode); ok && f.Value != math.Trunc(f.Value) {
			tk := f.GetToken()
			return fmt.Errorf("[%d:%d] %s is not a whole number: use an integer", tk.Position.Line, tk.Position.Column, strings.TrimSpace(f.String()))
		}
	}
	return nil
}

// StringList is one string or a list of them.
type StringList []string

// UnmarshalYAML accepts `f32` and `[f32, bf16]`; no value (`dtypes:` or
// ~) is an empty list, as it was before one string was accepted.
func (l *StringList) UnmarshalYAML(n ast.Node) error {
	if n.Type() == ast.NullType {
		*l = nil
		return nil
	}
	if seq, ok := n.(*ast.SequenceNode); ok {
		for _, v := range seq.Values { // name the item that is not a string
			switch v.(type) {
			case *ast.SequenceNode, *ast.MappingNode, *ast.MappingValueNode:
				tk := v.GetToken()
				return fmt.Errorf("[%d:%d] want a string here, got %s", tk.Position.Line, tk.Position.Column, strings.TrimSpace(v.String()))
			}
		}
	}
	return unmarshalList(n, (*[]string)(l), "a string or a list of strings")
}

// BoolList is one bool or a list of bools.
type BoolList []bool

// UnmarshalYAML accepts `true` and `[false, true]`, spelt as anything
// profiler.ParseBool reads (yes/no, on/off, 1/0), as --set does.
func (l *BoolList) UnmarshalYAML(n ast.Node) error {
	var words []string
	if err := unmarshalList(n, &words, "true/false or a list of them"); err != nil {
		return err
	}
	out := make([]bool, len(words))
	for i, w := range words {
		b, err := profiler.ParseBool(w)
		if err != nil {
			tk := n.GetToken()
			return fmt.Errorf("[%d:%d] %v", tk.Position.Line, tk.Position.Column, err)
		}
		out[i] = b
	}
	*l = out
	return nil
}

// ValueList is one scalar or a list of them, each kept as the decoder
// reads it (an int, a float, a string, a bool): the expressions of a
// manifest, `shape: n` or `shape: [rows, "cdiv(cols, 4)"]`. Checking each
// value is the reader's. No value is an empty list.
type ValueList []any

// UnmarshalYAML accepts a scalar or a list; a mapping is refused.
func (l *ValueList) UnmarshalYAML(n ast.Node) error {
	var v any
	if err := yaml.NodeToValue(n, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*l = nil
	case []any: // a list, also behind an anchor or alias
		*l = x
	case map[string]any:
		tk := n.GetToken()
		return fmt.Errorf("[%d:%d] want a value or a list of values, got %s", tk.Position.Line, tk.Position.Column, strings.TrimSpace(n.String()))
	default:
		*l = ValueList{x}
	}
	return nil
}

// unmarshalList decodes one value or a sequence of values; its errors carry
// the node's position in the "[line:col]" form the loaders understand.
func unmarshalList[T any](n ast.Node, dst *[]T, want string) error {
	var one T
	if err := yaml.NodeToValue(n, &one); err == nil {
		*dst = []T{one}
		return nil
	}
	var many []T
	if err := yaml.NodeToValue(n, &many); err != nil {
		tk := n.GetToken()
		return fmt.Errorf("[%d:%d] want %s, got %s", tk.Position.Line, tk.Position.Column, want, strings.TrimSpace(n.String()))
	}
	*dst = many
	return nil
}
