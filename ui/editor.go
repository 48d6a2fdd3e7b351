package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

type fieldKind int

const (
	kindKnob fieldKind = iota
	kindDType
	kindDim
	kindFlag
)

func (k fieldKind) String() string {
	return [...]string{"knob", "dtype", "dim", "flag"}[k]
}

// field is one editable line of the editor, built from the family's schema.
type field struct {
	kind  fieldKind
	name  string
	param profiler.Param     // knobs and dims
	flag  profiler.FlagParam // flags
	types []profiler.DType   // dtype
}

// fieldsOf lists a schema's editable values: knobs first (the reason the
// tool exists), then dtype, dims and flags.
func fieldsOf(sc profiler.Schema) []field {
	var fs []field
	for _, p := range sc.Knobs {
		fs = append(fs, field{kind: kindKnob, name: p.Name, param: p})
	}
	if len(sc.DTypes) > 0 {
		fs = append(fs, field{kind: kindDType, name: "dtype", types: sc.DTypes})
	}
	for _, p := range sc.Dims {
		fs = append(fs, field{kind: kindDim, name: p.Name, param: p})
	}
	for _, f := range sc.Flags {
		fs = append(fs, field{kind: kindFlag, name: f.Name, flag: f})
	}
	return fs
}

// value renders the field's current value in s.
func (f field) value(s profiler.Spec) string {
	switch f.kind {
	case kindKnob:
		return strconv.Itoa(s.Knobs[f.name])
	case kindDim:
		return strconv.Itoa(s.Dims[f.name])
	case kindDType:
		return string(s.DType)
	default:
		if s.Flags[f.name] {
			return "on"
		}
		return "off"
	}
}

// allowed describes what the field accepts, for the status line.
func (f field) allowed() string {
	switch f.kind {
	case kindKnob, kindDim:
		return f.param.Describe()
	case kindDType:
		var ts []string
		for _, t := range f.types {
			ts = append(ts, string(t))
		}
		return "{" + strings.Join(ts, ", ") + "}"
	}
	return "on/off"
}

func (f field) doc() string {
	if f.kind == kindFlag {
		return f.flag.Doc
	}
	if f.kind == kindDType {
		return "storage type of the buffers (math in f32)"
	}
	return f.param.Doc
}

// sweepable fields step through a list of values.
func (f field) sweepable() bool { return f.kind == kindKnob || f.kind == kindDim }

// sweepValues are the values `s` measures: the allowed choices.
func (f field) sweepValues() []int { return f.param.Choices() }

// step moves the field's value by dir (−1 or +1) through its allowed values.
// A value not in the list (typed by hand) steps to the nearest one in dir.
func (f field) step(s *profiler.Spec, dir int) {
	switch f.kind {
	case kindFlag:
		s.Flags[f.name] = !s.Flags[f.name]
	case kindDType:
		i := slices.Index(f.types, s.DType)
		i = clamp(i+dir, 0, len(f.types)-1)
		if len(f.types) > 0 {
			s.DType = f.types[i]
		}
	case kindKnob, kindDim:
		m := s.Knobs
		if f.kind == kindDim {
			m = s.Dims
		}
		m[f.name] = stepInt(f.param.Choices(), m[f.name], dir)
	}
}

// stepInt returns the next value after cur in dir within the sorted choices,
// staying at the ends.
func stepInt(choices []int, cur, dir int) int {
	if len(choices) == 0 {
		return cur
	}
	if dir > 0 {
		for _, c := range choices {
			if c > cur {
				return c
			}
		}
		return choices[len(choices)-1]
	}
	for i := len(choices) - 1; i >= 0; i-- {
		if choices[i] < cur {
			return choices[i]
		}
	}
	return choices[0]
}

// setTyped assigns a typed value. The value is kept even when the schema
// rejects it, so the editor can show it in red with the reason.
func (f field) setTyped(s *profiler.Spec, text string) error {
	text = strings.TrimSpace(text)
	switch f.kind {
	case kindFlag:
		switch strings.ToLower(text) {
		case "1", "on", "true", "yes", "y":
			s.Flags[f.name] = true
		case "0", "off", "false", "no", "n":
			s.Flags[f.name] = false
		default:
			return fmt.Errorf("%s=%q: type on or off", f.name, text)
		}
		return nil
	case kindDType:
		for _, t := range f.types {
			if string(t) == text {
				s.DType = t
				return nil
			}
		}
		return fmt.Errorf("dtype %q is not supported here: use one of %s", text, f.allowed())
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		return fmt.Errorf("%s=%q is not a whole number: type a value in %s", f.name, text, f.allowed())
	}
	if f.kind == kindDim {
		s.Dims[f.name] = v
	} else {
		s.Knobs[f.name] = v
	}
	return nil
}

// blames reports whether an error message names this field ("BQ=…"), so the
// editor can paint the culprit red. The name must start a word: "B=" must not
// match inside "BQ=" or "WB=".
func (f field) blames(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	needle := f.name + "="
	if f.kind == kindDType {
		needle = "dtype"
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], needle)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isWordByte(msg[at-1]) {
			return true
		}
		i = at + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
