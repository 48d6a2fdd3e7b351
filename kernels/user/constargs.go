package user

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/expr"
)

// constants is the `values:` entries that are constants (a literal, or an
// expression over literals and earlier constants), by name.
func (f *Family) constants() map[string]any {
	out := map[string]any{}
	for _, v := range f.values {
		if !allIn(v.p.Names(), out) {
			continue
		}
		if x, err := v.p.Eval(out); err == nil {
			out[v.name] = x
		}
	}
	return out
}

func allIn(names []string, env map[string]any) bool {
	for _, n := range names {
		if _, ok := env[n]; !ok {
			return false
		}
	}
	return true
}

// constArg is the value of an arg whose expression is a constant.
func constArg(p *expr.Program, consts map[string]any) (any, bool) {
	if p == nil || !allIn(p.Names(), consts) {
		return nil, false
	}
	x, err := p.Eval(consts)
	return x, err == nil
}

// checkConstArgs refuses at load a constant arg that its by-value
// parameter cannot hold (a fraction for an int, a negative for an
// unsigned, out of range), which would otherwise surface only when a spec
// is planned. A float bound to an integer parameter ahead of a float
// parameter is most often two args swapped: the message says so.
func (bl *builder) checkConstArgs(ud udisp, b ubinding, path, field, file string) error {
	consts := bl.f.constants()
	for i, up := range b.params {
		a := ud.args[up.arg]
		if a.buf != "" || up.kind == "" { // a buffer, or the dtype's own type (decided per spec)
			continue
		}
		v, ok := constArg(a.p, consts)
		if !ok {
			continue
		}
		_, err := profiler.ScalarOf(up.kind, up.param.Name, v)
		if err == nil {
			continue
		}
		why := err.Error()
		if _, rest, cut := strings.Cut(why, ": "); cut && strings.HasPrefix(why, "scalar ") {
			why = rest
		}
		msg := fmt.Sprintf("'%s' = %v goes to parameter `%s` of %s:%d: %s", a.text, v, describe(up.param), file, b.sig.Line, why)
		if _, isFloat := v.(float64); isFloat && !isFloatScalar(up.kind) {
			if j := slices.IndexFunc(b.params[i+1:], func(p uparam) bool { return ud.args[p.arg].buf == "" && (p.kind == "" || isFloatScalar(p.kind)) }); j >= 0 {
				later := ud.args[b.params[i+1+j].arg].text
				msg += fmt.Sprintf("; the args follow the parameter list: did you swap %s and %s?", a.text, later)
			}
		}
		apath, afield := bl.d.item(path+".args", field+".args", up.arg)
		return bl.d.err(apath, afield, "%s", msg)
	}
	return nil
}

func isFloatScalar(k profiler.ScalarKind) bool {
	return k == profiler.ScalarF32 || k == profiler.ScalarF64
}
