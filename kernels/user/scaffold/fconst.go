package scaffold

import (
	"fmt"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// addFunctionConstants gives each Metal function constant the entries read
// (directly, or through the helpers and globals they use: candle's
// where_cond reads IDS_CONTIGUOUS) a value, as a manifest must: a bool
// one a flag of its name (default false), an integer one a knob of one
// value 0, each with a TODO. A constant the source tests with
// is_function_constant_defined, or that only other kernels read, needs
// none and gets none.
func addFunctionConstants(p *plan, src string, sigs []csrc.Signature) {
	decls, err := metal.FunctionConstants(src)
	if err != nil || len(decls) == 0 {
		return
	}
	entries := map[string]bool{}
	for _, s := range sigs {
		entries[s.Entry] = true
	}
	none := func(string) bool { return false }
	for _, dc := range user.ConstantsNeedingValue(src, decls, none, func(kernel string) bool { return !entries[kernel] }) {
		what := fmt.Sprintf("function constant %s (%s, index %d)", dc.Name, dc.Type, dc.Index)
		if dc.Kind == profiler.ConstBool {
			n, isNew := p.claim(safeName(dc.Name, ""), "flag")
			if isNew {
				p.flags = append(p.flags, part{name: n, body: "{default: false}", comment: "sets " + what})
			}
			p.constants = append(p.constants, part{name: dc.Name, body: n, comment: p.todo(fmt.Sprintf("the value your launch gives %s", dc.Name),
				"%s: the flag %s sets it (default false); set the default your launch uses, or an expression over knobs and dims", what, n)})
			continue
		}
		n, isNew := p.claim(safeName(dc.Name, ""), "knob")
		if isNew {
			p.knobs = append(p.knobs, part{name: n, body: "{values: [0], default: 0}", comment: "sets " + what})
		}
		p.constants = append(p.constants, part{name: dc.Name, body: n, comment: p.todo(fmt.Sprintf("the value your launch gives %s", dc.Name),
			"%s: the knob %s sets it (one value, 0); list the values your launches use, or give an expression over knobs and dims", what, n)})
	}
}
