package yamlmsg

import (
	"testing"

	"github.com/goccy/go-yaml/parser"
)

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"cannot unmarshal string into Go struct field FileYAML.Defaults of type float64": "want a number here, got a string",
		"cannot unmarshal []interface {} into Go struct field X.Y of type string":        "want a string here, got a list",
		"cannot unmarshal uint64 into Go struct field m.Knobs of type map[string]x":      "want a mapping (key: value) here, got an integer",
		"string was used where sequence is expected":                                     `want a list (one "- item" per line, or [a, b]) here, got a string`,
		"mapping was used where sequence is expected":                                    `want a list (one "- item" per line, or [a, b]) here, got a mapping`,
		"unknown field \"x\"": "unknown field \"x\"", // not a type error: as it was
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFieldAt(t *testing.T) {
	src := "defaults:\n  time_limit: fast\nsweeps:\n  - kernel: k\n    dims: {N: [1, x]}\n    \"Lq,Lk\": 3\n"
	f, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line, col int
		want      string
	}{
		{2, 15, "defaults.time_limit"},
		{4, 13, "sweeps[0].kernel"},
		{5, 19, "sweeps[0].dims.N[1]"},
		{6, 14, "sweeps[0].Lq,Lk"},
		{1, 1, ""}, // before any value
	} {
		if got := FieldAt(f, c.line, c.col); got != c.want {
			t.Errorf("FieldAt(%d:%d) = %q, want %q", c.line, c.col, got, c.want)
		}
	}
	if FieldAt(nil, 1, 1) != "" {
		t.Error("nil file")
	}
	// A file whose AST holds a nil document body: no panic (the fuzzer's find).
	f, _ = parser.ParseBytes([]byte("0\n---"), 0)
	_ = FieldAt(f, 2, 1)
}

// A type error names the value at its position, quoted or plain, in flow
// or block style; a list, a mapping or a position past the line keep the
// message as it was.
func TestWithValue(t *testing.T) {
	const src = "a: {scratch: \"yes please\", out: true}\nb:\n  time_limit: fast # seconds\nc: [1, x]\nd: {k: [1]}\n"
	const boolMsg, num = "want true or false here, got a string", "want a number here, got a string"
	for _, c := range []struct {
		msg       string
		line, col int
		want      string
	}{
		{boolMsg, 1, 14, `want true or false here, got "yes please" (a string)`},
		{num, 3, 15, `want a number here, got fast (a string)`},
		{"want an integer here, got a string", 4, 8, `want an integer here, got x (a string)`},
		{"want a string here, got a list", 5, 8, "want a string here, got a list"},
		{num, 5, 8, num},  // a list starts there: no scalar
		{num, 3, 40, num}, // past the line
		{num, 9, 1, num},  // past the file
		{`unknown field "x"`, 1, 1, `unknown field "x"`},
	} {
		if got := WithValue(c.msg, []byte(src), c.line, c.col); got != c.want {
			t.Errorf("WithValue(%q, %d:%d) = %q, want %q", c.msg, c.line, c.col, got, c.want)
		}
	}
}
