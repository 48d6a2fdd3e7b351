package profiler

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestResultJSONKeysSnakeCase walks the type of Result and every struct it
// holds: each exported field must have a snake_case json name (map keys,
// such as knob and dim names, are data and are not checked).
func TestResultJSONKeysSnakeCase(t *testing.T) {
	var bad []string
	seen := map[reflect.Type]bool{}
	var walk func(tp reflect.Type, path string)
	walk = func(tp reflect.Type, path string) {
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice || tp.Kind() == reflect.Array || tp.Kind() == reflect.Map {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct || seen[tp] {
			return
		}
		seen[tp] = true
		for i := range tp.NumField() {
			f := tp.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type, path)
				continue
			}
			if !snakeCase.MatchString(name) {
				bad = append(bad, path+"."+f.Name+" (json "+strings.TrimSpace(name+" ")+"missing or not snake_case)")
			}
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(reflect.TypeOf(Result{}), "Result")
	for _, b := range bad {
		t.Error(b)
	}
	if !seen[reflect.TypeOf(TGMItem{})] {
		t.Error("the walk did not reach the budget items")
	}
}
