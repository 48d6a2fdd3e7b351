package user

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// MLX code bases keep a kernel body with text placeholders
// (`constexpr int MAX_N = {{MAX_N}};`) that Python fills with
// str.replace before mx.fast.metal_kernel. mltop fills each `{{NAME}}` of
// an mlx: body or header with the spec's value of the knob, dim, flag or
// value NAME, so a sweep can vary it.

// placeholderRE is a text placeholder: {{NAME}}, spaces allowed inside.
var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// PlaceholdersAsNames is text with each {{NAME}} placeholder written as
// NAME: what the placeholder stands for, as the manifest names it.
func PlaceholdersAsNames(text string) string {
	return placeholderRE.ReplaceAllString(text, "$1")
}

// mlxPlaceholders checks that every placeholder of the body and the header
// names a knob, dim, flag or value of the manifest.
func (bl *builder) mlxPlaceholders(k *mlxKernel) error {
	m, d := bl.m, bl.d
	declared := func(name string) bool {
		_, knob := m.Knobs[name]
		_, dim := m.Dims[name]
		_, flag := m.Flags[name]
		_, value := m.Values[name]
		return knob || dim || flag || value
	}
	_, text, _ := strings.Cut(k.body, "\n") // after the #line
	for _, part := range []struct{ path, field, text, where string }{
		{"$.mlx.body_file", "mlx.body_file", text, filepath.Base(k.file)},
		{"$.mlx.header", "mlx.header", k.header, "header"},
	} {
		first := 1
		if part.where != "header" && k.file == bl.f.path { // an inline body: lines of the manifest
			part.path, part.field, part.where = "$.mlx.body", "mlx.body", filepath.Base(k.file)
			first = max(d.bodyLine("$.mlx.body"), 1)
		}
		for _, at := range placeholderRE.FindAllStringSubmatchIndex(part.text, -1) {
			name := part.text[at[2]:at[3]]
			if declared(name) {
				continue
			}
			line := first + strings.Count(part.text[:at[0]], "\n")
			return d.err(part.path, part.field, "%s:%d: placeholder %s names no knob, dim, flag or value: declare %s, e.g. `values: {%s: 8}` for a constant or `knobs: {%s: {values: [4, 8], default: 8}}` to sweep it; each {{%s}} becomes its value",
				part.where, line, part.text[at[0]:at[1]], name, name, name, name)
		}
	}
	return nil
}

// fillPlaceholders puts each placeholder's value in e (the spec's knobs,
// dims, flags and values) into text.
func fillPlaceholders(text string, e map[string]any) (string, error) {
	var err error
	out := placeholderRE.ReplaceAllStringFunc(text, func(ph string) string {
		name := placeholderRE.FindStringSubmatch(ph)[1]
		v, ok := e[name]
		s, isText := placeholderText(v)
		if !ok || !isText {
			if err == nil {
				err = fmt.Errorf("placeholder %s: %v is not a number or true/false", ph, v)
			}
			return ph
		}
		return s
	})
	return out, err
}

// placeholderText is a value as C++ source: an integer, a float literal
// (with a point or an exponent, as Python's str writes it), true or false.
func placeholderText(v any) (string, bool) {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", false
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s, true
	}
	return "", false
}

// UnfilledSource is Source(lang), except that an mlx: body and header keep
// their {{NAME}} placeholders where Source has the default spec's values:
// what a suggestion may say by the manifest's names (`MAX_N * 4`, not 256).
// The two have the same lines.
func (f *Family) UnfilledSource(lang string) string {
	if lang == "metal" && f.mlx != nil {
		return f.mlxUnfilled
	}
	return f.Source(lang)
}
