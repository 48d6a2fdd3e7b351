package scaffold

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// scalarOnlyTypes are the template type parameters that by-value scalars
// use and no buffer does (acc_t of scale_cast<in_t, acc_t>(const in_t* x,
// in_t* y, acc_t scale, int n)): `new` passes float for them, as the
// buffers' dtype would make the scalar a half at f16. Each maps to the
// parameters that take it.
func scalarOnlyTypes(sig csrc.Signature, tmpl []tparam) map[string][]string {
	out := map[string][]string{}
	for _, tp := range tmpl {
		if !tp.isType {
			continue
		}
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(tp.name) + `\b`)
		var scalars []string
		byBuffer := false
		for _, prm := range sig.Bindable() {
			switch {
			case isMetalConstantRef(prm):
				if bareType(prm.Pointee) == tp.name {
					scalars = append(scalars, prm.Name)
				}
			case prm.Pointer:
				byBuffer = byBuffer || word.MatchString(prm.Pointee)
			case bareType(prm.Scalar) == tp.name:
				scalars = append(scalars, prm.Name)
			}
		}
		if !byBuffer && len(scalars) > 0 {
			out[tp.name] = scalars
		}
	}
	return out
}

// isMetalConstantRef says whether a parameter is Metal's `constant X& x`:
// one value, not a buffer.
func isMetalConstantRef(prm csrc.Param) bool {
	return prm.Pointer && strings.Contains(prm.Type, "constant") && !strings.Contains(prm.Type, "*")
}

func bareType(t string) string {
	return strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
}

// floatTypesComment is the entry line's comment on the template type
// parameters passed as float.
func floatTypesComment(k *kernelScan) string {
	var parts []string
	for _, tp := range k.tmpl {
		if ps := k.floatTypes[tp.name]; ps != nil {
			verb := "take"
			if len(ps) == 1 {
				verb = "takes"
			}
			parts = append(parts, fmt.Sprintf("%s is float: only by-value %s %s it", tp.name, strings.Join(ps, ", "), verb))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + " (buffers take the dtype)"
}
