package user

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/mltop/mltop/profiler"
)

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// unknownKeyHint is the hint after `unknown field "X"` at line:col of the
// manifest f: a did-you-mean from the keys of the mapping that holds X
// (a buffer's keys inside buffers, the top-level keys at the top) and
// those keys. ok is false when the mapping cannot be told.
func unknownKeyHint(f *ast.File, msg string, line, col int) (hint string, ok bool) {
	m := unknownFieldRE.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	if prose, text, more, ok := proseBeforeKey(f, line, col); ok {
		// `doc: ne0, the row length` in a {…} mapping: the comma ended the doc
		quoted := text + ", " + m[1]
		if more {
			quoted += ", …"
		}
		return fmt.Sprintf("a comma ends a value in a {…} mapping, so %q is read as a key after `%s: %s`: quote the %s string: %s: %q", m[1], prose, text, prose, prose, quoted), true
	}
	parent, found := mappingOfKey(f, line, col)
	if !found {
		return "", false
	}
	keys := keysAt(reflect.TypeFor[manifestYAML](), parent)
	if keys == nil {
		return "", false
	}
	at := parent
	if at == "" {
		at = "the top level"
	}
	return "check the spelling; " + profiler.DidYouMean(m[1], keys) + "the keys at " + at + " are " + strings.Join(keys, ", "), true
}

// mappingOfKey is the path (buffers[1], knobs.WG, "" at the top) of the
// mapping that holds the key at line:col.
func mappingOfKey(f *ast.File, line, col int) (path string, found bool) {
	if f == nil {
		return "", false
	}
	// A file that failed to decode can hold nodes whose getters
	// dereference nil: a hint is a nicety, never a crash.
	defer func() {
		if recover() != nil {
			path, found = "", false
		}
	}()
	var walk func(n ast.Node, path string) (string, bool)
	walk = func(n ast.Node, path string) (string, bool) {
		switch n := n.(type) {
		case *ast.DocumentNode:
			return walk(n.Body, path)
		case *ast.MappingNode:
			for _, v := range n.Values {
				if p, ok := walk(v, path); ok {
					return p, true
				}
			}
		case *ast.MappingValueNode:
			if n.Key == nil {
				return "", false
			}
			if tk := n.Key.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line == line && tk.Position.Column == col {
				return path, true
			}
			child := n.Key.String()
			if path != "" {
				child = path + "." + child
			}
			return walk(n.Value, child)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				if p, ok := walk(v, fmt.Sprintf("%s[%d]", path, i)); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	for _, d := range f.Docs {
		if p, ok := walk(d, ""); ok {
			return p, true
		}
	}
	return "", false
}

// proseKeys are the keys whose values are free text, where a comma is
// natural.
var proseKeys = map[string]bool{"doc": true, "note": true, "description": true}

// proseBeforeKey finds the key at line:col in a flow-style mapping right
// after a free-text key (proseKeys): it returns that key, its text, and
// whether more keys follow the one at line:col.
func proseBeforeKey(f *ast.File, line, col int) (key, text string, more, found bool) {
	if f == nil {
		return "", "", false, false
	}
	defer func() { // as in mappingOfKey: a hint never crashes
		if recover() != nil {
			key, text, more, found = "", "", false, false
		}
	}()
	for _, n := range ast.FilterFile(ast.MappingType, f) {
		m, ok := n.(*ast.MappingNode)
		if !ok || !m.IsFlowStyle {
			continue
		}
		for i := 1; i < len(m.Values); i++ {
			tk := m.Values[i].Key.GetToken()
			if tk == nil || tk.Position == nil || tk.Position.Line != line || tk.Position.Column != col || !nullValue(m.Values[i]) {
				continue // not the key, or `doc: x, defualt: 64`: a key of its own, misspelt
			}
			// back over the earlier pieces of the same text (the decoder
			// may name any of them) to the free-text key
			j := i - 1
			for j > 0 && nullValue(m.Values[j]) {
				j--
			}
			prose := m.Values[j]
			if k := prose.Key.String(); proseKeys[k] && prose.Value != nil {
				text := prose.Value.String()
				for _, v := range m.Values[j+1 : i] {
					text += ", " + v.Key.String()
				}
				return k, text, i+1 < len(m.Values) && nullValue(m.Values[i+1]), true
			}
		}
	}
	return "", "", false, false
}

// nullValue: a mapping entry with a key and no value (`{a: 1, b}`).
func nullValue(v *ast.MappingValueNode) bool {
	if v == nil || v.Key == nil {
		return false
	}
	_, null := v.Value.(*ast.NullNode)
	return null || v.Value == nil
}

// keysAt is the yaml keys of the struct reached from t by path
// ("buffers[0]", "knobs.BQ"; "" is t itself), nil when path leads to no
// struct.
func keysAt(t reflect.Type, path string) []string {
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			continue
		}
		name, _, indexed := strings.Cut(seg, "[")
		t = derefType(t)
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem() // the segment is a map key (a knob's name)
		case reflect.Struct:
			f, ok := fieldByTag(t, name)
			if !ok {
				return nil
			}
			t = derefType(f.Type)
			for ; indexed && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array); indexed = false {
				t = derefType(t.Elem())
			}
		default:
			return nil
		}
	}
	if t = derefType(t); t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// derefType is t without its pointers (tol: is a *tolYAML).
func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// manifestKeys is the top-level keys of a manifest, read from the schema
// so the list in a hint cannot fall behind it.
func manifestKeys() string {
	return strings.Join(keysAt(reflect.TypeFor[manifestYAML](), ""), ", ")
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

var unknownNameRE = regexp.MustCompile(`unknown name '([^']+)'`)

// didYouMeanIn is "; did you mean X?" for the unknown name an expression
// error msg names and its nearest among names, "" when none is near.
func didYouMeanIn(msg string, names []string) string {
	m := unknownNameRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	if h := profiler.DidYouMean(m[1], names); h != "" {
		return "; " + strings.TrimSpace(h)
	}
	return ""
}
