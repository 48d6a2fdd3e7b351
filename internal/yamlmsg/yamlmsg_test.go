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
