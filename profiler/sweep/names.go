package sweep

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// namesError is the unknown names of a part of the file (a `sweeps:`
// entry, a search block's shapes), one InputError each. ParseStream
// gathers those of every entry into one error (inFileOrder): a user with
// typos in two entries fixes both after one run.
type namesError struct{ errs []error }

func (e *namesError) Error() string { return inFileOrder(e.errs).Error() }

// Unwrap is the one InputError the names make, for errors.As.
func (e *namesError) Unwrap() error { return inFileOrder(e.errs) }

// namesErr is a *namesError of errs, or nil when there are none.
func namesErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return &namesError{errs: errs}
}

// checkNames checks every knob, dim and flag name of a `sweeps:` entry
// against the family's schema. All the unknown ones are named in one
// error (a *namesError), in file order, each at its file:line:col with a
// did-you-mean.
func checkNames(s SweepYAML, sc profiler.Schema, at func(sub, msg string) error) error {
	return namesErr(unknownNames(s, sc, at))
}

// unknownNames is checkNames' list: one InputError per unknown name.
func unknownNames(s SweepYAML, sc profiler.Schema, at func(sub, msg string) error) []error {
	var unknown []error
	for _, key := range slices.Sorted(maps.Keys(s.Dims)) {
		for _, n := range splitNames(key) {
			if _, ok := profiler.FindParam(sc.Dims, n); !ok {
				unknown = append(unknown, at("dims."+key, unknownParam("dim", n, s.Kernel, sc)))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(s.Flags)) {
		if _, ok := sc.Flag(key); !ok {
			unknown = append(unknown, at("flags."+key, fmt.Sprintf("%s has no flag %q: %s", s.Kernel, key, profiler.UnknownFlag(sc, key))))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(s.Knobs)) {
		for _, n := range splitNames(key) {
			if _, ok := profiler.FindParam(sc.Knobs, n); !ok {
				unknown = append(unknown, at("knobs."+key, unknownParam("knob", n, s.Kernel, sc)))
			}
		}
	}
	return unknown
}

// unknownParam is the message for a knob or dim name (kind) the schema
// lacks: the nearest name, or where the name belongs when it is another
// kind of parameter, then the names of its kind.
func unknownParam(kind, name, kernel string, sc profiler.Schema) string {
	params := sc.Knobs
	if kind == "dim" {
		params = sc.Dims
	}
	hint := profiler.DidYouMean(name, profiler.ParamNameList(params))
	if _, isKnob := sc.Knob(name); isKnob && kind == "dim" {
		hint = fmt.Sprintf("%s is a knob (put it under knobs:); ", name)
	} else if _, isDim := sc.Dim(name); isDim && kind == "knob" {
		hint = fmt.Sprintf("%s is a dim (put it under dims:); ", name)
	} else if _, isFlag := sc.Flag(name); isFlag {
		hint = fmt.Sprintf("%s is a flag (put it under flags:); ", name)
	}
	return fmt.Sprintf("%s has no %s %q: %s%ss are %s", kernel, kind, name, hint, kind, profiler.ParamNames(params))
}

// inFileOrder makes errs (InputErrors) one InputError: the first in the
// file leads, with its position and field, and each other follows on a
// line of its own, whole ("file:line:col: field: message"). An error
// said twice (a search shape checked for two entries of one kernel) is
// said once. nil when errs is empty.
func inFileOrder(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	var ies []*profiler.InputError
	said := map[string]bool{}
	for _, err := range errs {
		var ie *profiler.InputError
		if !errors.As(err, &ie) {
			ie = &profiler.InputError{Msg: err.Error()}
		}
		if !said[ie.Error()] {
			said[ie.Error()] = true
			ies = append(ies, ie)
		}
	}
	// Stable: names at one position (a comma key) keep their order.
	slices.SortStableFunc(ies, func(a, b *profiler.InputError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	first := *ies[0]
	var rest []string
	for _, e := range ies[1:] {
		rest = append(rest, e.Error())
	}
	first.Snippet = strings.Join(rest, "\n")
	return &first
}
