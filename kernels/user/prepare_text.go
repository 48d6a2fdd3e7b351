package user

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file writes the text a compiler receives for one spec: the prelude
// (toolkit fp16/bf16 headers or storage structs, standard macros, the
// constexpr names), then each file with its host code blanked (CUDA), its
// macros inserted before their first preprocessor use, and #line lines so
// that messages name the user's files and lines.

// value is what a spec gives one offered name.
type value struct {
	text    string // as C: "256", "true", "__nv_bfloat16"
	macro   string // as a macro's body: "256", "1", "__nv_bfloat16"
	defined bool   // false: a define whose expression is false, the DTYPE_<NAME> of another dtype
}

// render writes the main text and the headers (by include name) for vals.
func (p *prepared) render(vals map[string]value) (string, map[string]string) {
	var head []string
	if p.lang == "cuda" {
		head = p.cudaPrelude()
	}
	var decls []string
	for _, o := range p.offers {
		if v := vals[o.name]; p.plan[o.name].How == InjectConstexpr && v.defined {
			decls = append(decls, p.declaration(o, v))
		}
	}
	if p.declLine == 0 {
		head, decls = append(head, decls...), nil
	}
	includes := map[string]string{}
	for _, u := range p.units[1:] {
		includes[u.name] = p.body(u, vals, nil)
	}
	for h, s := range p.stubs {
		includes[h] = s
	}
	return joinLines(head) + p.body(p.units[0], vals, decls), includes
}

// declaration is the line that gives a constexpr name its value.
func (p *prepared) declaration(o offer, v value) string {
	constant := "[[maybe_unused]] " // parameters of the same name shadow it: no "never referenced" warning
	if p.lang == "metal" {
		constant = "constant " // MSL: a program-scope variable lives in the constant address space
	}
	switch o.kind {
	case offerType:
		return fmt.Sprintf("using %s = %s;", o.name, v.text)
	case offerBool:
		return fmt.Sprintf("%sconstexpr bool %s = %s;", constant, o.name, v.text)
	case offerFloat:
		if p.lang == "metal" { // MSL has no double
			return fmt.Sprintf("%sconstexpr float %s = %s;", constant, o.name, v.text)
		}
		return fmt.Sprintf("%sconstexpr double %s = %s;", constant, o.name, v.text)
	}
	return fmt.Sprintf("%sconstexpr int %s = %s;", constant, o.name, v.text)
}

// body is one file's text: host code blanked (CUDA), macros inserted, and
// decls (if any) before line p.declLine.
func (p *prepared) body(u *unit, vals map[string]value, decls []string) string {
	code := u.code
	if p.lang == "cuda" {
		code = applyLineEdits(csrc.Blank(code, u.scan), p.edits[u])
	}
	respell := p.respelledIncludes(u)
	var b strings.Builder
	b.WriteString(lineDirective(1, u.path))
	for i, l := range strings.SplitAfter(code, "\n") {
		if r, ok := respell[i+1]; ok {
			l = r
		}
		if names := p.inserts[u][i+1]; len(names) > 0 || len(decls) > 0 && i+1 == p.declLine {
			n := 0
			if i+1 == p.declLine {
				b.WriteString(joinLines(decls))
				n += len(decls)
			}
			for _, name := range names {
				if v := vals[name]; v.defined {
					fmt.Fprintf(&b, "#define %s %s\n", name, v.macro)
					n++
				}
			}
			if n > 0 {
				b.WriteString(lineDirective(i+1, u.path))
			}
		}
		b.WriteString(l)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	return b.String()
}

// respelledIncludes are the #include lines of u (by line number) that
// name a local header by another spelling than the one it reaches NVRTC
// under (`"../exception.h"` beside `"exception.h"`: the compiler gets each
// file once, by one name), rewritten to that name. CUDA only: Metal's
// includes are pasted where they stand.
func (p *prepared) respelledIncludes(u *unit) map[int]string {
	if p.lang != "cuda" {
		return nil
	}
	var out map[int]string
	lines := strings.SplitAfter(u.code, "\n")
	for i, d := range u.scan.Directives {
		v := u.local[i]
		if v == nil || v.name == d.Include || d.Line < 1 || d.Line > len(lines) {
			continue
		}
		l := lines[d.Line-1]
		r := strings.Replace(l, `"`+d.Include+`"`, `"`+v.name+`"`, 1)
		if r == l {
			r = strings.Replace(l, "<"+d.Include+">", `"`+v.name+`"`, 1)
		}
		if r != l {
			if out == nil {
				out = map[int]string{}
			}
			out[d.Line] = r
		}
	}
	return out
}

// lineDirective is `#line n "path"` with the path quoted as C does.
func lineDirective(n int, path string) string {
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(path)
	return fmt.Sprintf("#line %d \"%s\"\n", n, q)
}

// cudaPrelude: the toolkit's 16-bit types (or storage structs without
// them), the fixed-width integer types, glibc's short type names, the
// promoting math overloads and the standard macros the source uses,
// skipping names the source declares.
func (p *prepared) cudaPrelude() []string {
	var out []string
	if p.toolkit.fp16 {
		out = append(out, "#include <cuda_fp16.h>")
	} else {
		out = append(out, "#if !defined(__CUDA_FP16_H__) && !defined(__CUDA_FP16_TYPES_EXIST__)",
			cuda.StorageOnlyStruct("__half"), "#endif")
	}
	if p.toolkit.bf16 {
		out = append(out, "#include <cuda_bf16.h>")
	} else {
		out = append(out, "#if !defined(__CUDA_BF16_H__) && !defined(__CUDA_BF16_TYPES_EXIST__)",
			cuda.StorageOnlyStruct("__nv_bfloat16"), "#endif")
	}
	if p.torchSource() {
		// the source names T, which is c10::Half at f16 (torchCTypes),
		// ahead of the torch header that declares it
		out = append(out, strings.Split(strings.TrimSuffix(torchScalarTypes(p.toolkit), "\n"), "\n")...)
	}
	if p.toolkit.libcu && p.namesStdMath() {
		// nvcc's cuda_runtime.h, in every .cu, declares std::exp and the
		// other std:: math overloads: Apex's softmax says std::exp with no
		// <cmath> of its own
		out = append(out, "#include <cmath>")
	}
	own := p.fileScopeDecls(stdintNames)
	if slices.ContainsFunc(stdintNames, func(n string) bool { return !own[n] && p.usedInCompiled(n) }) {
		out = append(out, strings.Split(strings.TrimSuffix(stdintText(p.toolkit, own), "\n"), "\n")...)
	}
	for _, td := range glibcTypedefs {
		if p.usesUndeclared(td[0]) {
			out = append(out, "typedef "+td[1]+" "+td[0]+"; // glibc's <sys/types.h>, which nvcc programs get through the host headers")
		}
	}
	for _, fn := range pdlFunctions {
		if p.usesUndeclared(fn[0]) {
			out = append(out, fn[1])
		}
	}
	var mixed []string
	for _, f := range mixedMathFunctions {
		if p.usesUndeclared(f) {
			mixed = append(mixed, f)
		}
	}
	if text := mixedMathText(mixed); text != "" {
		out = append(out, strings.Split(strings.TrimSuffix(text, "\n"), "\n")...)
	}
	return append(out, p.standardMacroLines()...)
}

// standardMacroLines define the standard macros the source uses (only
// those: CCCL's headers define some of them again, and an unused
// definition would only earn a warning there). With libcu++, its
// <cuda/std/climits>, which its other headers include and which defines
// the limits without #ifndef, comes first, so ours are the ones skipped.
func (p *prepared) standardMacroLines() []string {
	var out []string
	climits := false
	for _, m := range standardMacros {
		if !p.mentioned(m[0]) || p.declared[m[0]] {
			continue
		}
		if p.toolkit.libcu && macroHeader(m[0]) == "limits" && !climits {
			out, climits = append(out, "#include <cuda/std/climits>"), true
		}
		out = append(out, "#ifndef "+m[0], strings.TrimSpace("#define "+m[0]+" "+m[1]))
		if p.toolkit.libcu && slices.Contains(libcuMathMacros, m[0]) {
			out = append(out, "#define MLTOP_PRELUDE_"+m[0]+"_")
		}
		out = append(out, "#endif")
	}
	return out
}

// mentioned says whether any file of the source uses name.
func (p *prepared) mentioned(name string) bool {
	for _, u := range p.units {
		if u.scan.FirstUse(name) > 0 || u.scan.FirstDirective(name) != nil {
			return true
		}
	}
	return false
}

// fileScopeDecls are those of names that a file of the source declares at
// file scope or #defines (an int64_t declared in a namespace does not
// stand for the global one).
func (p *prepared) fileScopeDecls(names []string) map[string]bool {
	own := map[string]bool{}
	for _, u := range p.units {
		for _, d := range u.scan.Decls {
			for _, n := range d.Names {
				if d.Scope == "" && slices.Contains(names, n) {
					own[n] = true
				}
			}
		}
		for _, d := range u.scan.Directives {
			if !d.Dead && slices.Contains(names, d.Defines) {
				own[d.Defines] = true
			}
		}
	}
	return own
}

// usesUndeclared says whether the compiled code (host code blanked) of any
// file uses name while no file declares or #defines it.
func (p *prepared) usesUndeclared(name string) bool {
	if p.declared[name] {
		return false
	}
	for _, u := range p.units {
		for _, d := range u.scan.Directives {
			if !d.Dead && d.Defines == name {
				return false
			}
		}
	}
	return p.usedInCompiled(name)
}

// usedInCompiled says whether the compiled code (host code blanked) of any
// file uses name.
func (p *prepared) usedInCompiled(name string) bool {
	for _, u := range p.units {
		if u.compiled.FirstUse(name) > 0 {
			return true
		}
	}
	return false
}

// glibcTypedefs are the short unsigned names glibc's <sys/types.h> gives
// every nvcc program (through cuda_runtime.h's host headers) and NVRTC does
// not: SGEMM kernels write `const uint cRow = blockIdx.y;`. (glibc has no
// uchar.)
var glibcTypedefs = [][2]string{
	{"uint", "unsigned int"}, {"ushort", "unsigned short"}, {"ulong", "unsigned long"},
	{"u_char", "unsigned char"}, {"u_short", "unsigned short"}, {"u_int", "unsigned int"}, {"u_long", "unsigned long"},
}

// namesStdMath says whether a file of the source calls a std:: math
// function (std::exp, std::sqrt, …).
func (p *prepared) namesStdMath() bool {
	for _, u := range p.units {
		if stdMathCall.MatchString(u.code) {
			return true
		}
	}
	return false
}

var stdMathCall = regexp.MustCompile(`\bstd\s*::\s*(exp|exp2|expm1|log|log2|log10|log1p|sqrt|cbrt|pow|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|erf|erfc|fabs|abs|floor|ceil|round|trunc|fmod|fmin|fmax|isnan|isinf|isfinite|signbit|copysign|hypot|lgamma|tgamma)\s*\(`)

// pdlFunctions are the device functions of programmatic dependent launch
// that nvcc programs get from the runtime headers and NVRTC does not
// declare (ggml-cuda calls them on sm_90): the PTX they stand for, nothing
// before sm_90 (no dependent launch there; mltop launches none either).
var pdlFunctions = [][2]string{
	{"cudaGridDependencySynchronize", `static __device__ __forceinline__ void cudaGridDependencySynchronize() { // mltop: NVRTC does not declare it
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}`},
	{"cudaTriggerProgrammaticLaunchCompletion", `static __device__ __forceinline__ void cudaTriggerProgrammaticLaunchCompletion() { // mltop: NVRTC does not declare it
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}`},
}

// standardMacros are what nvcc users get from math.h, float.h, limits.h
// and the runtime header nvcc includes.
var standardMacros = [][2]string{
	// NVRTC has no __builtin_huge_valf / __builtin_nanf: the bit patterns, as CUDA's math_constants.h writes them
	{"INFINITY", "__int_as_float(0x7f800000U)"}, {"NAN", "__int_as_float(0x7fffffffU)"}, {"HUGE_VALF", "__int_as_float(0x7f800000U)"},
	{"HUGE_VAL", "__longlong_as_double(0x7ff0000000000000LL)"},
	{"M_PI", "3.14159265358979323846"}, {"M_PI_2", "1.57079632679489661923"}, {"M_PI_4", "0.78539816339744830962"},
	{"M_1_PI", "0.31830988618379067154"}, {"M_2_PI", "0.63661977236758134308"}, {"M_2_SQRTPI", "1.12837916709551257390"},
	{"M_E", "2.7182818284590452354"}, {"M_SQRT2", "1.41421356237309504880"}, {"M_SQRT1_2", "0.70710678118654752440"},
	{"M_LN2", "0.69314718055994530942"}, {"M_LN10", "2.30258509299404568402"}, {"M_LOG2E", "1.4426950408889634074"},
	{"M_LOG10E", "0.43429448190325182765"},
	{"FLT_MAX", "3.40282346638528859812e+38F"}, {"FLT_MIN", "1.17549435082228750797e-38F"}, {"FLT_EPSILON", "1.1920928955078125e-07F"},
	{"DBL_MAX", "1.79769313486231570815e+308"}, {"DBL_MIN", "2.22507385850720138309e-308"}, {"DBL_EPSILON", "2.22044604925031308085e-16"},
	{"CHAR_BIT", "8"}, {"SCHAR_MAX", "127"}, {"SCHAR_MIN", "(-128)"}, {"UCHAR_MAX", "255"},
	{"SHRT_MAX", "32767"}, {"SHRT_MIN", "(-32768)"}, {"USHRT_MAX", "65535"},
	{"INT_MAX", "2147483647"}, {"INT_MIN", "(-2147483647 - 1)"}, {"UINT_MAX", "4294967295U"},
	{"LLONG_MAX", "9223372036854775807LL"}, {"LLONG_MIN", "(-9223372036854775807LL - 1)"}, {"ULLONG_MAX", "18446744073709551615ULL"},
	// nvcc includes cuda_runtime.h in every .cu file, so programs test
	// `#if CUDART_VERSION >= …` with no include: the compiler's version,
	// as cuda_runtime_api.h writes it (12040 for 12.4)
	{"CUDART_VERSION", "(__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)"},
	// GCC's __extension__ (nvcc accepts it, NVRTC does not): ggml-common.h
	// writes it before anonymous unions; it only silences pedantic warnings
	{"__extension__", ""},
	// GCC's spellings of asm (nvcc accepts them, NVRTC does not): llm-awq's
	// gemm kernels write `__asm__ __volatile__("ldmatrix…")`
	{"__asm__", "asm"}, {"__asm", "asm"},
}
