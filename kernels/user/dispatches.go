package user

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler/expr"
)

// dispatches reads the dispatches; at least one must be timed.
func (bl *builder) dispatches() error {
	f, m, d := bl.f, bl.m, bl.d
	if len(m.Dispatches) == 0 {
		return d.err("$", "dispatches", "no dispatches: add `dispatches: [{entry: my_kernel, grid: [...], threads: [...], args: [...]}]`")
	}
	for i, ds := range m.Dispatches {
		if err := bl.dispatch(i, ds); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(f.disps, func(u udisp) bool { return u.timed }) {
		return d.err("$.dispatches", "dispatches", "every dispatch is `timed: false`: at least one must be timed")
	}
	return nil
}

// dispatch reads dispatch i: grid, threads, args (buffers, then scalar
// expressions) and TGM, then checks the args against the entry's
// parameters in every source.
func (bl *builder) dispatch(i int, ds dispatchYAML) error {
	f, d, vars, names, compile := bl.f, bl.d, bl.vars, bl.bufferNames, bl.compile
	path, field := fmt.Sprintf("$.dispatches[%d]", i), fmt.Sprintf("dispatches[%d]", i)
	if ds.Entry == "" {
		return d.err(path, field+".entry", "no entry: name the kernel function (__global__ / kernel)")
	}
	ud := udisp{name: ds.Name, entry: ds.Entry, timed: ds.Timed == nil || *ds.Timed}
	if ud.name == "" {
		ud.name = ds.Entry
	}
	for _, g := range []struct {
		key string
		in  []any
		out *[3]*expr.Program
	}{{"grid", ds.Grid, &ud.grid}, {"threads", ds.Threads, &ud.threads}} {
		if len(g.in) == 0 || len(g.in) > 3 {
			return d.err(path, field+"."+g.key, "want 1 to 3 expressions, e.g. `%s: [rows, 1, 1]`, got %d", g.key, len(g.in))
		}
		for k := range 3 {
			var v any = 1
			if k < len(g.in) {
				v = g.in[k]
			}
			p, err := compile(v, fmt.Sprintf("%s.%s[%d]", path, g.key, k), fmt.Sprintf("%s[%d]", g.key, k))
			if err != nil {
				return err
			}
			g.out[k] = p
		}
	}
	scalarSeen := false
	for k, a := range ds.Args {
		apath := fmt.Sprintf("%s.args[%d]", path, k)
		if names[a] {
			if scalarSeen {
				return d.err(apath, fmt.Sprintf("%s.args[%d]", field, k), "buffer %s comes after a scalar: mltop passes the buffers first, then the scalars (CUDA: as arguments in that order; Metal: one struct at the buffer index after the last buffer); reorder the kernel's parameters", a)
			}
			ud.bufArgs = append(ud.bufArgs, a)
			continue
		}
		p, err := compile(a, apath, fmt.Sprintf("%s.args[%d]", field, k))
		if err != nil {
			var ee *expr.Error
			if errors.As(err, &ee) && strings.HasPrefix(ee.Msg, "unknown name") {
				return d.err(apath, fmt.Sprintf("%s.args[%d]", field, k), "%q is neither a buffer (%s) nor an expression over %s", a, strings.Join(bufNames(f.bufs), ", "), strings.Join(vars.Names(), ", "))
			}
			return err
		}
		scalarSeen = true
		ud.scalars = append(ud.scalars, uscalar{name: a, p: p})
	}
	for k, t := range ds.TGM {
		if t.Name == "" {
			return d.err(fmt.Sprintf("%s.tgm[%d]", path, k), fmt.Sprintf("%s.tgm[%d].name", field, k), "each TGM item needs a name")
		}
		p, err := compile(t.Bytes, fmt.Sprintf("%s.tgm[%d].bytes", path, k), fmt.Sprintf("tgm[%s].bytes", t.Name))
		if err != nil {
			return err
		}
		ud.tgm = append(ud.tgm, utgm{name: t.Name, note: t.Note, bytes: p})
	}
	if ds.DynamicTGM != nil {
		p, err := compile(ds.DynamicTGM, path+".dynamic_tgm", field+".dynamic_tgm")
		if err != nil {
			return err
		}
		ud.dynTGM = p
	}
	if err := bl.checkSignature(ud, ds, path, field); err != nil {
		return err
	}
	f.disps = append(f.disps, ud)
	return nil
}

// checkSignature checks a dispatch's args against its entry's parameters,
// in each source.
func (bl *builder) checkSignature(ud udisp, ds dispatchYAML, path, field string) error {
	f, d := bl.f, bl.d
	for _, lang := range slices.Sorted(mapsKeys(f.src)) {
		s := f.src[lang]
		if lang == "metal" { // [[host_name]] entries, scalars per index (metal_entry.go)
			if err := bl.checkMetalEntry(ud, s, path, field); err != nil {
				return err
			}
			continue
		}
		sig, found, ok := csrc.FindEntry(s.code, ds.Entry)
		if !ok {
			hint := "no kernel functions found"
			if len(found) > 0 {
				hint = "kernels found: " + strings.Join(found, ", ")
			}
			return d.err(path+".entry", field+".entry", "%s has no kernel %q (%s)", s.path, ds.Entry, hint)
		}
		want := len(ud.bufArgs) + len(ud.scalars)
		got := sig.Bindable()
		if lang == "metal" && len(ud.scalars) > 0 {
			want = len(ud.bufArgs) + 1 // the scalars arrive as one struct
		}
		if len(got) != want {
			what := fmt.Sprintf("%d args", len(ds.Args))
			if lang == "metal" && len(ud.scalars) > 0 {
				what = fmt.Sprintf("%d buffers + 1 struct of %d scalars", len(ud.bufArgs), len(ud.scalars))
			}
			return d.err(path+".args", field+".args", "%s but %s:%d %s takes %d parameters: list the buffers and scalars in the parameter order", what, s.path, sig.Line, sig, len(got))
		}
	}
	return nil
}

type uscalar struct {
	name string
	p    *expr.Program
}

type utgm struct {
	name, note string
	bytes      *expr.Program
}

type udisp struct {
	name, entry   string
	grid, threads [3]*expr.Program
	bufArgs       []string
	scalars       []uscalar
	tgm           []utgm
	dynTGM        *expr.Program
	timed         bool
}
