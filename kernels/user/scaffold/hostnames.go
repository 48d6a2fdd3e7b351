package scaffold

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// Metal kernels are not launched from the source: a template kernel's
// instances are its explicit instantiations, each named for the host with
// [[host_name("…")]] (`template [[host_name("ssm_scan_c2")]] [[kernel]]
// void ssm_scan_kernel<2>(…);`). They play the part a CUDA source's
// launches play: a value template parameter they set to several integers
// is a knob of those values, and `--entry ssm_scan_c2` names the template
// with that instance's values as the default.

// metalHostName is the instantiation host names in src, if it names one.
func metalHostName(src, host string) (metal.Instantiation, bool) {
	hosts, err := metal.HostNames(src)
	if err != nil {
		return metal.Instantiation{}, false
	}
	inst, ok := hosts[host]
	return inst, ok
}

// hostNameTemplates is a launchTemplate made of sig's [[host_name]]
// instantiations: the one the request named (Request.Entries) first, else
// the first in the source. The instance's element type (its first
// floating type argument) is left to the dtype (written as the parameter's
// own name, so no instance fixes a buffer's type), and so is a type
// argument equal to it; a functor of it becomes that functor of the
// dtype; another type (a scalar, a functor of no element type) stays as
// written. An instance of no floating type argument whose type arguments
// include an integer C type (candle's copy_u32 is unary_kernel<uint32_t,
// uint32_t, uid>) or a struct of the source (ggml's get_rows_q4_0 passes
// block_q4_0) is taken as written: a spec's dtype is a floating type,
// so its buffers keep their integer type and the entry its functor.
func (c *context) hostNameTemplates(sig csrc.Signature, tmpl []tparam) (launchTemplate, bool) {
	hosts, err := metal.HostNames(c.src)
	if err != nil {
		return launchTemplate{}, false
	}
	type inst struct {
		host string
		at   int
		args []string
	}
	var insts []inst
	var lines map[string]int
	for host, in := range hosts {
		if in.Template != sig.Entry || !coversTemplate(in.Args, tmpl) {
			continue
		}
		args := slices.Clone(in.Args)
		elem, elemParam := instanceElement(in.Args, tmpl)
		intInstance := elem == "" && (integerInstance(in.Args, tmpl) || c.structInstance(in.Args, tmpl))
		for i, tp := range tmpl {
			if intInstance {
				break
			}
			if !tp.isType {
				continue
			}
			if elem != "" && args[i] != elem && elemWord(elem).MatchString(args[i]) && c.sourceStruct(args[i]) {
				// a functor of the element type (MLX's scan: Op is
				// CumSum<float>): the same functor of the dtype
				args[i] = elemWord(elem).ReplaceAllString(args[i], elemParam)
				continue
			}
			if elem != "" && args[i] != elem && !elemWord(elem).MatchString(args[i]) {
				// another type beside the element type: a scalar (ggml's
				// kernel_cpy_f32_f16 is kernel_cpy_t_t<float, half>), which
				// the instance converts to whatever the dtype, or a functor
				// of no element type (candle's silu_f32_strided is
				// unary_kernel_strided<float, float, usilu>, the struct a
				// macro writes): it stays as written
				continue
			}
			args[i] = tp.name
		}
		at := strings.Index(c.src, `"`+host+`"`)
		if at < 0 { // a host name a macro pastes together ("contig_scan_" #name)
			if lines == nil {
				lines = metal.HostNameLines(c.src)
			}
			if n, ok := lines[host]; ok {
				at = lineOffset(c.src, n)
			}
		}
		insts = append(insts, inst{host: host, at: at, args: args})
	}
	if len(insts) == 0 {
		return launchTemplate{}, false
	}
	sort.Slice(insts, func(a, b int) bool {
		pa, pb := slices.Contains(c.entries, insts[a].host), slices.Contains(c.entries, insts[b].host)
		if pa != pb {
			return pa
		}
		return insts[a].at < insts[b].at
	})
	lt := launchTemplate{instances: true, args: insts[0].args, line: lineOf(c.src, max(insts[0].at, 0))}
	for _, in := range insts {
		lt.all = append(lt.all, launchSeen{args: in.args, line: lineOf(c.src, max(in.at, 0)), blockArg: -1})
	}
	slices.SortFunc(lt.all, func(a, b launchSeen) int { return a.line - b.line }) // listed in the source's order
	return lt, true
}

// coversTemplate says whether an instance's arguments fill a template's
// parameters: each one, or those before the parameters with a default
// (MLX's rope_float32 is rope<float, int32_t> of `template <typename T,
// typename IdxT, int N = 4>`).
func coversTemplate(args []string, tmpl []tparam) bool {
	if len(args) > len(tmpl) {
		return false
	}
	for _, tp := range tmpl[len(args):] {
		if tp.def == "" || tp.pack {
			return false
		}
	}
	return true
}

// instanceElement is an instance's element type, the argument of its first
// type parameter that is a floating type (float, half, bfloat, or MLX's
// names for them: float32_t, float16_t, bfloat16_t), and that parameter's
// name; "" when it has none.
func instanceElement(args []string, tmpl []tparam) (elem, param string) {
	for i, tp := range tmpl {
		if i < len(args) && tp.isType && (halfScalar[args[i]] || mlxFloatNames[args[i]] || args[i] == "float") {
			return args[i], tp.name
		}
	}
	return "", ""
}

// mlxFloatNames are MLX's typedefs of the floating types.
var mlxFloatNames = map[string]bool{"float32_t": true, "float16_t": true, "bfloat16_t": true}

// integerInstance says whether one of an instance's type arguments is an
// integer C type (uint32_t, uchar, int64_t).
func integerInstance(args []string, tmpl []tparam) bool {
	for i, tp := range tmpl {
		if i < len(args) && tp.isType && !tp.pack {
			if d := cTypes[strings.Join(strings.Fields(args[i]), " ")]; d != "" && d[0] != 'f' && d[0] != 'b' {
				return true
			}
		}
	}
	return false
}

// structInstance says whether one of an instance's type arguments is a
// struct of the source (ggml's kernel_get_rows_q4_0 is
// kernel_get_rows_q<block_q4_0, 2, dequantize_q4_0>): a block of
// quantized data, which no dtype replaces.
func (c *context) structInstance(args []string, tmpl []tparam) bool {
	for i, tp := range tmpl {
		if i < len(args) && tp.isType && !tp.pack && c.sourceStruct(args[i]) {
			return true
		}
	}
	return false
}

// elemWord matches the element type as a word of a template argument.
func elemWord(elem string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(elem) + `\b`)
}
