package sweep

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/mltop/mltop/profiler"
)

// utf8BOM is the byte-order mark some editors put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// stripBOM drops a leading UTF-8 byte-order mark.
func stripBOM(src []byte) []byte { return bytes.TrimPrefix(src, utf8BOM) }

// checkShape runs before decoding: a file holds one YAML document (a
// second one would be ignored silently), and every unknown key is
// reported, all of them in file order, not the first one a map walk meets.
func checkShape(name string, src []byte) error {
	f, err := parseAST(src)
	if err != nil || f == nil {
		return nil // the decoder reports malformed YAML with its position
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			line := d.Body.GetToken().Position.Line
			if d.Start != nil {
				line = d.Start.Position.Line
			}
			return &profiler.InputError{File: name, Line: line, Msg: fmt.Sprintf("a sweep file holds one YAML document; the second starts at line %d: put every entry under the first document's `sweeps:` list, or split the file", line)}
		}
		body = d.Body
	}
	if body == nil {
		return nil
	}
	var unknown []unknownKey
	walkKeys(body, reflect.TypeOf(FileYAML{}), "", &unknown)
	if len(unknown) == 0 {
		return nil
	}
	slices.SortStableFunc(unknown, func(a, b unknownKey) int {
		if a.line != b.line {
			return a.line - b.line
		}
		return a.col - b.col
	})
	first := unknown[0]
	msg := fmt.Sprintf("unknown field %q", first.key)
	if len(unknown) > 1 {
		var rest []string
		for _, u := range unknown[1:] {
			rest = append(rest, fmt.Sprintf("%q (line %d)", u.key, u.line))
		}
		msg += fmt.Sprintf("; also unknown: %s", strings.Join(rest, ", "))
	}
	at := strings.TrimPrefix(first.path[:len(first.path)-len(first.key)-1], ".")
	if at == "" {
		at = "the top level"
	}
	msg += fmt.Sprintf(": check the spelling; %sthe keys at %s are %s (docs/sweeps.md)", profiler.DidYouMean(first.key, first.valid), at, strings.Join(first.valid, ", "))
	return &profiler.InputError{File: name, Line: first.line, Col: first.col, Msg: msg}
}

// parseAST parses without letting a parser panic escape (see strictUnmarshal).
func parseAST(src []byte) (f *ast.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("parser failed: %v", p)
		}
	}()
	return parser.ParseBytes(src, 0)
}

type unknownKey struct {
	key, path string
	line, col int
	valid     []string // the keys allowed where it stands
}

// yamlKeys are the yaml tags of struct type t, in field order.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// walkKeys compares a mapping's keys with the yaml tags of struct type t,
// descending into known fields, maps, slices and pointers.
func walkKeys(n ast.Node, t reflect.Type, path string, out *[]unknownKey) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil {
		return
	}
	if tn, ok := n.(*ast.TagNode); ok {
		n = tn.Value
	}
	if an, ok := n.(*ast.AnchorNode); ok {
		n = an.Value
	}
	if t == reflect.TypeOf(MeasureYAML{}) {
		for _, kv := range mappingValues(n) {
			key := kv.Key.GetToken().Value
			if _, ok := profiler.SettingByKey(key); !ok {
				tk := kv.Key.GetToken()
				*out = append(*out, unknownKey{key: key, path: path + "." + key, line: tk.Position.Line, col: tk.Position.Column, valid: profiler.SettingKeys()})
			}
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for _, kv := range mappingValues(n) {
			key := kv.Key.GetToken().Value
			f, ok := fieldByTag(t, key)
			if !ok {
				tk := kv.Key.GetToken()
				*out = append(*out, unknownKey{key: key, path: path + "." + key, line: tk.Position.Line, col: tk.Position.Column, valid: yamlKeys(t)})
				continue
			}
			walkKeys(kv.Value, f.Type, path+"."+key, out)
		}
	case reflect.Map:
		for _, kv := range mappingValues(n) {
			walkKeys(kv.Value, t.Elem(), path+"."+kv.Key.GetToken().Value, out)
		}
	case reflect.Slice:
		if seq, ok := n.(*ast.SequenceNode); ok {
			for i, v := range seq.Values {
				walkKeys(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i), out)
			}
		}
	}
}

func mappingValues(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
