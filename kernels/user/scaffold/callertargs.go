package scaffold

import (
	"regexp"
	"slices"
	"strings"
)

// templateHead is a function template's head: its parameter list and the
// name the declaration that follows gives (`template <typename input_t,
// typename acc_t> void dispatch_forward(`).
var templateHead = regexp.MustCompile(`\btemplate\s*<([^{};]*?)>\s*(?:(?:static|inline|__host__|__device__)\s+)*[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?[\s*&]+([A-Za-z_]\w*)\s*\(`)

// callerTemplateArgs replaces the template arguments of a launch at off
// that are type parameters of the function template launching it with
// the fixed C types a call of that function passes there: Megatron's
// dispatch_scaled_upper_triang_masked_softmax_forward<input_t, output_t,
// acc_t> launches the kernel with <input_t, output_t, acc_t, 0>, and its
// caller writes dispatch_…<scalar_t, scalar_t, float>(…): the kernel's
// acc_t is float, not the dtype. Arguments no call fixes stay.
func callerTemplateArgs(src string, off int, args []string) []string {
	heads := templateHead.FindAllStringSubmatchIndex(src[:off], -1)
	if len(heads) == 0 {
		return args
	}
	h := heads[len(heads)-1]
	var params []string
	for _, p := range splitArgs(src[h[2]:h[3]]) {
		f := strings.Fields(p)
		if len(f) == 2 && (f[0] == "typename" || f[0] == "class") {
			params = append(params, f[1])
		} else {
			params = append(params, "")
		}
	}
	fn := src[h[4]:h[5]]
	if !slices.ContainsFunc(args, func(a string) bool { return a != "" && slices.Contains(params, a) }) {
		return args
	}
	call := regexp.MustCompile(`\b` + regexp.QuoteMeta(fn) + `\s*<`)
	for _, m := range call.FindAllStringIndex(src, -1) {
		if m[0] >= h[0] && m[0] < h[5] { // the template's own declaration
			continue
		}
		end := closingAngle(src, m[1]-1)
		if end < 0 || !strings.HasPrefix(strings.TrimLeft(src[end+1:], " \t\r\n"), "(") {
			continue
		}
		given := splitArgs(strings.Join(strings.Fields(src[m[1]:end]), " "))
		if len(given) != len(params) {
			continue
		}
		out := slices.Clone(args)
		for i, a := range args {
			if j := slices.Index(params, a); j >= 0 && a != "" && cTypes[given[j]] != "" {
				out[i] = given[j]
			}
		}
		return out
	}
	return args
}
