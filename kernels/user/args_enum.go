package user

import (
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// enumTypes are the enums code defines, by name, each mapped to its
// underlying type: the one it names (`enum Mode : uint8_t`,
// `typedef enum : int { … } mode_t;`), else int (a scoped enum's, and
// what compilers give an unscoped one whose enumerators fit an int). A
// parameter of an enum type takes an integer of that type.
func enumTypes(code string) map[string]string {
	out := map[string]string{}
	for _, d := range csrc.EnumDefs(csrc.Tokenize(code)) {
		base := d.Base
		if base == "" {
			base = "int"
		}
		if d.Name != "" {
			out[d.Name] = base
		}
		if d.Alias != "" {
			out[d.Alias] = base
		}
	}
	return out
}

// sourceClasses keeps, of the template parameters the entry binds to a
// type, those whose type is a struct or an enum the source defines.
func (ts typeScope) sourceClasses(pinned map[string]string) map[string]string {
	out := map[string]string{}
	for param, t := range pinned {
		name, _ := splitTemplateName(ts.resolve(t))
		if _, enum := ts.enums[name]; enum {
			out[param] = t
			continue
		}
		if _, found, _ := csrc.FindStruct(ts.code, name); found {
			out[param] = t
		}
	}
	return out
}

// castEnums notes the entry's template arguments whose template parameter
// of sig has an enum type of the source (`template <typename scalar_t,
// ReductionType REDUCE>`, pytorch_scatter): a knob's value there is an
// integer, which C++ does not convert to the enum, so the entry casts it
// (entryExpr.renderCast). The type is qualified as the entry's scope
// finds it from the kernel's namespace.
func (e *entryExpr) castEnums(sig csrc.Signature, ts typeScope) {
	e.casts = nil
	for i, t := range sig.TemplateTypes {
		name, _ := splitTemplateName(ts.resolve(t))
		if k := strings.LastIndex(name, "::"); k >= 0 {
			name = name[k+2:]
		}
		if _, enum := ts.enums[name]; !enum || t == "" {
			continue
		}
		if !strings.HasPrefix(t, "::") {
			first, _, _ := strings.Cut(t, "::")
			t = enclosing(e.scope, e.name, first) + t
		}
		if e.casts == nil {
			e.casts = map[int]string{}
		}
		e.casts[i] = t
	}
}
