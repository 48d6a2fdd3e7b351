package user

import (
	"fmt"
	"slices"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// A knob that sizes a buffer (`shape: [rows, BLOCK]`, or through a value
// that uses it) changes the arrays themselves: inputs made for one of its
// values cannot be reused for another, nor the reference's outputs. Such
// a knob is a shape knob whether or not the manifest says `shape: true`;
// mltop check notes the knobs it marked so (ImpliedShapeKnobs).

// ImpliedShapeKnob is a knob without `shape: true` that a buffer's shape
// uses, which mltop treats as a shape knob.
type ImpliedShapeKnob struct {
	Knob, Buffer string
	Line, Col    int // of the buffer's shape in the manifest
}

// markShapeKnobs makes every knob a buffer's shape uses a shape knob,
// before the buffers' inits are read (an init may use such a knob).
// Shapes that do not compile are left to buffer, which reports them.
func (bl *builder) markShapeKnobs() {
	for i, b := range bl.m.Buffers {
		path := fmt.Sprintf("$.buffers[%d].shape", i)
		for _, s := range b.Shape {
			text, err := exprText(s)
			if err != nil {
				continue
			}
			p, err := expr.Compile(text, bl.vars, expr.Where{})
			if err != nil {
				continue
			}
			for _, k := range bl.knobsUsed(p.Names()) {
				bl.impliedShapeKnob(k, b.Name, path)
			}
		}
	}
}

// impliedShapeKnob marks knob k, which buffer's shape (at path) uses, a
// shape knob; once per knob, and only when the manifest did not.
func (bl *builder) impliedShapeKnob(k, buffer, path string) {
	f := bl.f
	i := slices.IndexFunc(f.schema.Knobs, func(p profiler.Param) bool { return p.Name == k })
	if i < 0 || f.schema.Knobs[i].Shape {
		return
	}
	f.schema.Knobs[i].Shape = true
	line, col, _ := bl.d.pos(path)
	f.impliedShape = append(f.impliedShape, ImpliedShapeKnob{Knob: k, Buffer: buffer, Line: line, Col: col})
}

// knobsUsed are the knobs names are, or that the values they name use.
func (bl *builder) knobsUsed(names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := bl.m.Knobs[n]; ok {
			out = append(out, n)
		}
		for _, v := range bl.f.values {
			if v.name == n {
				out = append(out, bl.knobsUsed(v.p.Names())...)
			}
		}
	}
	return out
}

// isShapeKnob says whether knob n is a shape knob: `shape: true`, or
// implied by a buffer's shape.
func (bl *builder) isShapeKnob(n string) bool {
	i := slices.IndexFunc(bl.f.schema.Knobs, func(p profiler.Param) bool { return p.Name == n })
	return i >= 0 && bl.f.schema.Knobs[i].Shape
}

// ImpliedShapeKnobs are the knobs mltop treats as shape knobs because a
// buffer's shape uses them, though the manifest does not mark them
// `shape: true`.
func (f *Family) ImpliedShapeKnobs() []ImpliedShapeKnob { return slices.Clone(f.impliedShape) }
