package yamlmsg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestLists: each list type takes one value as a list of it, a list as
// itself and no value as an empty list, and refuses a value of another
// shape at its position.
func TestLists(t *testing.T) {
	type doc struct {
		I IntList    `yaml:"i"`
		S StringList `yaml:"s"`
		B BoolList   `yaml:"b"`
		V ValueList  `yaml:"v"`
	}
	for _, c := range []struct {
		src  string
		want doc
	}{
		{"i: 32\ns: f32\nb: yes\nv: rows", doc{I: IntList{32}, S: StringList{"f32"}, B: BoolList{true}, V: ValueList{"rows"}}},
		{"i: [16, 32]\ns: [f32, bf16]\nb: [false, on]\nv: [rows, 4]", doc{I: IntList{16, 32}, S: StringList{"f32", "bf16"}, B: BoolList{false, true}, V: ValueList{"rows", uint64(4)}}},
		{"i:\ns: ~\nb: []\nv:", doc{B: BoolList{}}},
		{"v: 4", doc{V: ValueList{uint64(4)}}},
		{"a: &x [rows, cols]\nv: *x", doc{V: ValueList{"rows", "cols"}}},
	} {
		var got doc
		if err := yaml.Unmarshal([]byte(c.src), &got); err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %#v, want %#v", c.src, got, c.want)
		}
	}
	for src, want := range map[string]string{
		"i: 64.5":      "[1:4] 64.5 is not a whole number",
		"i: [1, x]":    "[1:4] want an integer or a list of integers",
		"s: [a, [b]]":  "[1:8] want a string here, got [b]",
		"s: {a: 1}":    "want a string or a list of strings",
		"b: maybe":     "[1:4] ",
		"v: {rows: 1}": "[1:4] want a value or a list of values",
	} {
		var got doc
		err := yaml.Unmarshal([]byte(src), &got)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}
