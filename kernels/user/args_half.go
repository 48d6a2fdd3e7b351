package user

import (
	"strings"

	"github.com/mltop/mltop/profiler"
)

// halfKind is the 16-bit float kind a scalar of kind k is passed as at
// dtype dt (k "" is the dtype's own type), or "" when it is none.
func halfKind(k profiler.ScalarKind, dt profiler.DType) profiler.ScalarKind {
	if k == "" {
		k = dtypeScalarKinds[dt]
	}
	if k == profiler.ScalarF16 || k == profiler.ScalarBF16 {
		return k
	}
	return ""
}

// roundHalfValues rounds in dims, to what the kernel receives, each
// `values:` entry that an arg passes by itself (args: [N, a, x, y]) to a
// 16-bit float parameter or struct field, so that the reference computes
// with the kernel's number (2.1 is 2.099609375 as a half). A value used
// inside a larger expression is left as written.
func (f *Family) roundHalfValues(dims map[string]any, dt profiler.DType) {
	round := func(name string, kind profiler.ScalarKind) {
		name = strings.TrimSpace(name)
		if kind == "" || !f.isValue(name) {
			return
		}
		var x float64
		switch v := dims[name].(type) {
		case float64:
			x = v
		case int:
			x = float64(v)
		default:
			return
		}
		if r, ok := profiler.RoundHalf(kind, x); ok && r != x {
			dims[name] = r
		}
	}
	for _, d := range f.disps {
		for _, b := range d.bind {
			for _, up := range b.params {
				a := d.args[up.arg]
				switch {
				case a.p != nil && a.buf == "" && a.elems == nil && up.st == nil:
					round(a.p.Source(), halfKind(up.kind, dt))
				case up.st != nil:
					for i, v := range a.fields {
						if lf := up.st.leaves[i]; !lf.pointer && !v.list && v.progs[0] != nil {
							round(v.progs[0].Source(), halfKind(lf.kind, dt))
						}
					}
				}
			}
		}
	}
}

func (f *Family) isValue(name string) bool {
	for _, v := range f.values {
		if v.name == name {
			return true
		}
	}
	return false
}
