package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// metalCode is the Metal source with its local headers as one text: where
// a struct the entry takes (ggml's kargs in ggml-metal-impl.h) is defined.
func (bl *builder) metalCode() string {
	if p := bl.f.prep["metal"]; p != nil && len(p.units) > 1 {
		return joinUnits(p.units).code
	}
	return bl.f.src["metal"].code
}

// structFiller hands out the fields of a Metal kernel's scalar struct, in
// order, to the args after the buffers: a scalar fills the next element,
// an array value a whole array field.
type structFiller struct {
	name   string
	fields []metal.StructField
	field  int // the next field
	elem   int // the next element of an array field
}

func (s *structFiller) next(a uarg) (uparam, error) {
	if s.field >= len(s.fields) {
		return uparam{}, fmt.Errorf("%s is one arg too many: struct %s has %d fields (%s), and the args before it fill them all", a.text, s.name, len(s.fields), s.fieldList())
	}
	f := s.fields[s.field]
	up := uparam{kind: f.Kind, param: csrc.Param{Name: f.Name, Scalar: f.Type}}
	if a.elems != nil {
		switch {
		case f.Count == 1:
			return up, fmt.Errorf("array value %s goes to field `%s %s` of struct %s, which is not an array: give one expression", a.text, f.Type, f.Name, s.name)
		case s.elem != 0 || len(a.elems) != f.Count:
			return up, fmt.Errorf("array value %s has %d elements for field `%s %s[%d]` of struct %s (from element %d): an array value fills the whole field", a.text, len(a.elems), f.Type, f.Name, f.Count, s.name, s.elem)
		}
		up.param = csrc.Param{Name: f.Name, Pointee: f.Type, Pointer: true}
		s.field++
		return up, nil
	}
	if f.Count > 1 {
		up.param.Name = fmt.Sprintf("%s[%d]", f.Name, s.elem)
	}
	if s.elem++; s.elem == f.Count {
		s.field, s.elem = s.field+1, 0
	}
	return up, nil
}

// done says which fields no arg filled.
func (s *structFiller) done() error {
	if s.field == len(s.fields) {
		return nil
	}
	rest := make([]string, 0, len(s.fields)-s.field)
	for _, f := range s.fields[s.field:] {
		rest = append(rest, f.Name)
	}
	return fmt.Errorf("the args after the buffers fill %d of struct %s's %d fields: %s have no value; give every field in the struct's order (%s), an array field as an array value [a, b, c]", s.field, s.name, len(s.fields), strings.Join(rest, ", "), s.fieldList())
}

func (s *structFiller) fieldList() string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = fieldName(f.Name, f.Count)
	}
	return strings.Join(names, ", ")
}

// fieldName is a struct field as a list of fields names it: "shape[4]"
// for an array of 4, "dim" for a scalar.
func fieldName(name string, count int) string {
	if count > 1 {
		return fmt.Sprintf("%s[%d]", name, count)
	}
	return name
}
