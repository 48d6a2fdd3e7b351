package user

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// This file fills a struct's array field (multi_tensor_apply's
// TensorListMetadata: `void* addresses[4][36]; int sizes[36]; int
// block_to_chunk[320];`) from what a manifest writes for it:
//   - a list: its elements from the first, row-major; a shorter list
//     leaves the rest zero;
//   - nested lists, one per dimension (`addresses: [[g], [p], [m], [v]]`):
//     each fills its row from the row's start, the rest zero;
//   - one expression: every element gets it, evaluated with i the
//     element's (row-major) index (`block_to_chunk: i`).

// elementIndex is the name an array field's one expression reads as the
// element's index.
const elementIndex = "i"

// readsName says whether expression src reads name.
func readsName(src, name string) bool {
	for _, t := range csrc.Tokenize(src) {
		if t.Kind == csrc.Ident && t.Text == name {
			return true
		}
	}
	return false
}

// arrayCautions are what a value may not mean as written: a flat list
// that fills only the start of the first row of a multi-dimensional
// array (`addresses: [g, p, m, v]` for `void* addresses[4][36]` fills
// addresses[0][0..3]), and an expression reading i where the manifest
// declares i (then i is that dim or value, not the element index).
func arrayCautions(v structValue, lf structLeaf) []string {
	var out []string
	if v.list && v.paths == nil && len(lf.extents) > 1 && lf.extents[0] > 1 && len(v.bufs) > 1 && len(v.bufs) <= lf.count/lf.extents[0] {
		rows := make([]string, len(v.bufs))
		for k := range v.bufs {
			rows[k] = "[" + v.elemShown(k) + "]"
		}
		out = append(out, fmt.Sprintf("the flat list %s fills %s[0][0..%d], the start of the first row of `%s`: for one element per row write the nested form [%s]", v.shown(), lf.path, len(v.bufs)-1, lf.decl, strings.Join(rows, ", ")))
	}
	if v.shadowsIndex && lf.count > 1 {
		out = append(out, fmt.Sprintf("%s = %s reads i, which the manifest declares: i is that name, not the element index (rename the dim or value to fill the elements by their index)", lf.path, v.progs[0].Source()))
	}
	return out
}

// readsIndex says whether an expression reads i, the element index, which
// the manifest does not declare itself.
func readsIndex(src string, vars expr.Vars) bool {
	if _, declared := vars[elementIndex]; declared {
		return false
	}
	for _, t := range csrc.Tokenize(src) {
		if t.Kind == csrc.Ident && t.Text == elementIndex {
			return true
		}
	}
	return false
}

// elementPositions are the flat (row-major) indices the elements of value
// v fill in array field lf; an error when v does not fit it.
func elementPositions(v structValue, lf structLeaf, structName string) ([]int, error) {
	if !v.list {
		return nil, nil
	}
	if v.paths == nil {
		if len(v.bufs) > lf.count {
			return nil, fmt.Errorf("list %s has %d elements for field `%s` of struct %s: give at most %d (a shorter list leaves the rest zero)", v.shown(), len(v.bufs), lf.decl, structName, lf.count)
		}
		pos := make([]int, len(v.bufs))
		for k := range pos {
			pos[k] = k
		}
		return pos, nil
	}
	pos := make([]int, len(v.paths))
	for k, p := range v.paths {
		if len(p) != len(lf.extents) {
			return nil, fmt.Errorf("list %s nests %d deep at element %d, but field `%s` of struct %s has %d dimensions: give one list per dimension, as %s", v.shown(), len(p), k, lf.decl, structName, len(lf.extents), nestedExample(lf.extents))
		}
		flat := 0
		for d, idx := range p {
			if idx >= lf.extents[d] {
				return nil, fmt.Errorf("list %s has %d elements in dimension %d of field `%s` of struct %s, whose extent is %d", v.shown(), idx+1, d+1, lf.decl, structName, lf.extents[d])
			}
			flat = flat*lf.extents[d] + idx
		}
		pos[k] = flat
	}
	return pos, nil
}

// nestedExample writes the shape of a nested list for extents: [[a, …], …].
func nestedExample(extents []int) string {
	return strings.Repeat("[", len(extents)) + "a, …" + strings.Repeat("], …", len(extents)-1) + "]"
}

// partialNote names an array field given in part: "sizes (1 of 36)".
func partialNote(v structValue, lf structLeaf) string {
	if !v.list || len(v.bufs) >= lf.count {
		return ""
	}
	return fmt.Sprintf("%s (%d of %d)", lf.path, len(v.bufs), lf.count)
}

// fillElements writes one expression into every element of array field
// lf, evaluated with i the element's index.
func fillElements(bytes []byte, p *expr.Program, lf structLeaf, e map[string]any) error {
	env := maps.Clone(e)
	for k := range lf.count {
		env[elementIndex] = k
		x, err := p.Eval(env)
		if err != nil {
			return fmt.Errorf("field %s[%d]: %w", lf.path, k, err)
		}
		name := fmt.Sprintf("%s[%d]", lf.path, k)
		sc, err := profiler.ScalarOf(lf.kind, name, x)
		if err != nil {
			return fmt.Errorf("%v (field `%s`, %s = %s with i = %d)", err, lf.decl, name, p.Source(), k)
		}
		copy(bytes[lf.offset+k*lf.size:], sc.Bytes())
	}
	return nil
}
