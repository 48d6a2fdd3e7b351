// Package yamlmsg turns the YAML decoder's errors into messages about the
// user's file: which field a position is in, and type errors in the
// file's words rather than Go's, and the list types that take one value
// written alone as a list of it (lists.go). Sweep files and kernel
// manifests share it.
package yamlmsg

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// FieldAt is the path (sweeps[0].dims.N[0]) of the last value in f that
// starts at or before line:col, the field a decode error there is about;
// "" when f is nil or nothing starts there.
func FieldAt(f *ast.File, line, col int) (best string) {
	if f == nil {
		return ""
	}
	// The AST of a file that failed to decode can hold nodes whose
	// getters dereference nil: a path is a nicety, never a crash (best
	// so far is kept).
	defer func() { _ = recover() }()
	bl, bc := 0, 0
	var walk func(n ast.Node, path string)
	walk = func(n ast.Node, path string) {
		if n == nil {
			return
		}
		if path != "" { // only values have a path (not the document)
			if tk := n.GetToken(); tk != nil && tk.Position != nil {
				l, c := tk.Position.Line, tk.Position.Column
				if (l < line || l == line && c <= col) && (l > bl || l == bl && c >= bc) {
					best, bl, bc = path, l, c
				}
			}
		}
		switch n := n.(type) {
		case *ast.DocumentNode:
			walk(n.Body, path)
		case *ast.MappingNode:
			for _, v := range n.Values {
				walk(v, path)
			}
		case *ast.MappingValueNode:
			if n.Key == nil {
				return
			}
			key := strings.Trim(n.Key.String(), `"'`)
			if path != "" {
				key = path + "." + key
			}
			walk(n.Value, key)
		case *ast.SequenceNode:
			for i, v := range n.Values {
				walk(v, fmt.Sprintf("%s[%d]", path, i))
			}
		case *ast.AnchorNode:
			walk(n.Value, path)
		case *ast.TagNode:
			walk(n.Value, path)
		}
	}
	for _, d := range f.Docs {
		walk(d, "")
	}
	return best
}

var (
	unmarshalRE = regexp.MustCompile(`^cannot unmarshal (.+) into Go (?:struct field \S+|value) of type (\S+)$`)
	usedWhereRE = regexp.MustCompile(`^(\w+) was used where (\w+) is expected$`)
)

// Plain says a decoder's type error in the file's words: "want
// a number, got a string" rather than Go's "cannot unmarshal string into
// Go struct field FileYAML.Defaults of type float64".
func Plain(msg string) string {
	kind := func(t string) string {
		switch {
		case strings.HasPrefix(t, "float"):
			return "a number"
		case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
			return "an integer"
		case t == "bool":
			return "true or false"
		case t == "string":
			return "a string"
		case strings.HasPrefix(t, "[]"), t == "sequence":
			return "a list (one \"- item\" per line, or [a, b])"
		case strings.HasPrefix(t, "map"), t == "mapping", strings.HasPrefix(t, "*"), strings.Contains(t, "."): // a Go struct
			return "a mapping (key: value)"
		}
		return t
	}
	got := func(t string) string { k, _, _ := strings.Cut(kind(t), " ("); return k }
	if m := unmarshalRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want %s here, got %s", kind(m[2]), got(m[1]))
	}
	if m := usedWhereRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want %s here, got %s", kind(m[2]), got(m[1]))
	}
	return msg
}

var gotScalarRE = regexp.MustCompile(`^(want .+ here, got )(a string|a number|an integer|true or false)$`)

// WithValue names the value a Plain type error is about, read from src at
// line:col: `want true or false here, got "yes please" (a string)`. Other
// messages, and a position with no scalar, come back as they are.
func WithValue(msg string, src []byte, line, col int) string {
	m := gotScalarRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	v := scalarAt(src, line, col)
	if v == "" {
		return msg
	}
	return m[1] + v + " (" + m[2] + ")"
}

// scalarAt is the scalar written at line:col (1-based) of src, quotes
// kept, up to what ends a plain scalar in flow or block style; "" when
// none starts there.
func scalarAt(src []byte, line, col int) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) || col < 1 {
		return ""
	}
	rs := []rune(strings.TrimRight(lines[line-1], "\r"))
	if col > len(rs) {
		return ""
	}
	s := string(rs[col-1:])
	if s == "" {
		return ""
	}
	if q := s[0]; q == '"' || q == '\'' {
		if end := strings.IndexByte(s[1:], q); end >= 0 {
			return s[:end+2]
		}
		return ""
	}
	if strings.ContainsRune("[{-#", rune(s[0])) {
		return ""
	}
	if end := strings.IndexAny(s, ",]}#"); end >= 0 {
		s = s[:end]
	}
	return strings.TrimSpace(s)
}
