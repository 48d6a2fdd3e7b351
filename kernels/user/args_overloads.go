package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/profiler"
)

// This file chooses among CUDA overloads that differ only in their
// pointer types (`scale(__half* v, int n)` and `scale(float* v, int n)`):
// per dtype, the one whose pointer parameters accept the buffers bound to
// them. NVRTC then gets the entry cast to that overload's type,
// `(void(*)(__half*, int))scale`, as its name expression.

// bindOverloads binds the args to the overload each dtype's buffers
// choose; still ambiguous at some dtype, it is the ambiguity's error. A
// dtype whose buffers no overload takes makes that dtype's specs invalid.
func (bl *builder) bindOverloads(ud udisp, amb *csrc.AmbiguousError, bc bindContext, path, field string) (ubinding, error) {
	ambiguous := bl.d.err(path+".entry", field+".entry", "%s: %v", bc.s.path, amb)
	for _, g := range amb.Fitting {
		if _, ok := g.FunctionPointerType(); !ok {
			return ubinding{}, ambiguous
		}
	}
	chosen := map[profiler.DType]ubinding{}
	none := map[profiler.DType]string{}
	var first *ubinding
	for _, dt := range bl.f.schema.DTypes {
		var takes []csrc.Signature
		for _, g := range amb.Fitting {
			if bl.pointeesAccept(g, ud.args, bc.s, dt) {
				takes = append(takes, g)
			}
		}
		switch len(takes) {
		case 0:
			none[dt] = fmt.Sprintf("at %s no overload of %s takes these buffers (%s): %s", dt, amb.Name, bufferTypes(bl.f, ud.args, dt), overloadList(amb.Fitting))
			continue
		case 1:
		default:
			return ubinding{}, ambiguous
		}
		b, err := bl.bindTo(ud, "cuda", takes[0], bc, path, field)
		if err != nil {
			return b, err
		}
		chosen[dt] = b
		if first == nil {
			first = &b
		}
	}
	if first == nil {
		return ubinding{}, ambiguous
	}
	b := *first
	b.overloads, b.noOverload = chosen, none
	return b, nil
}

// pointeesAccept says whether each buffer bound to a pointer parameter of
// g may be one at dtype dt.
func (bl *builder) pointeesAccept(g csrc.Signature, args []uarg, s source, dt profiler.DType) bool {
	ts := typeScope{typedefs: csrc.Typedefs(s.code), dtype: bl.dtypeName(), sig: g}
	for k, p := range g.Bindable() {
		if k >= len(args) || args[k].buf == "" || !p.Pointer {
			continue
		}
		if want := ts.elem(p); want != "" && !fitsPointee(bl.f.bufDType(args[k].buf, dt), want) {
			return false
		}
	}
	return true
}

// bufferTypes writes the buffer args with their dtypes at dt: "v f16".
func bufferTypes(f *Family, args []uarg, dt profiler.DType) string {
	var out []string
	for _, a := range args {
		if a.buf != "" {
			out = append(out, fmt.Sprintf("%s %s", a.buf, f.bufDType(a.buf, dt)))
		}
	}
	return strings.Join(out, ", ")
}

func overloadList(sigs []csrc.Signature) string {
	out := make([]string, len(sigs))
	for i, g := range sigs {
		out[i] = fmt.Sprintf("line %d: %s", g.Line, g)
	}
	return strings.Join(out, "; ")
}

// overloadFor is the binding and the entry (cast to the overload's type)
// of a dispatch at dtype dt, when its entry names overloads that the
// buffers choose between; b and entry as they are otherwise.
func overloadFor(b ubinding, dt profiler.DType, entry string) (ubinding, string, error) {
	if b.overloads == nil {
		return b, entry, nil
	}
	ob, ok := b.overloads[dt]
	if !ok {
		return b, entry, fmt.Errorf("%s: drop %s from dtypes, or add an overload for it", b.noOverload[dt], dt)
	}
	fp, _ := ob.sig.FunctionPointerType()
	return ob, "(" + fp + ")" + entry, nil
}
