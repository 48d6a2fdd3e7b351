package mslemu

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mltop/mltop/metal"
)

// Threadgroup variables are shared by the group's threads: they become
// statics, which is right because groups run one after another. A
// declaration is one at the start of a line that ends in `;`: arrays and
// single values, of any type (`threadgroup float s[N];`, `threadgroup
// MD<T> shared[N];`, `threadgroup MD<T> total;`). A parameter
// (`threadgroup T shared[N],`, `threadgroup T& total)`) and a pointer
// (`threadgroup float* p = …;`) stay what they are.
var threadgroupArray = regexp.MustCompile(`(?m)^(\s*)threadgroup\s+((?:(?:\w+::)*\w+(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>)?\s+)+\w+\s*(?:\[[^\];]*\]\s*)*;)`)

// A program-scope `constant int N = 256;` is a constant on Metal (a
// threadgroup array may take N as its size): it becomes `static const`.
// Only a declaration at the start of a line with an initializer matches:
// parameters (`constant float& eps`), function constants (inlined
// before) and `constant constexpr` are left alone.
var programConstant = regexp.MustCompile(`(?m)^constant\s+((?:\w+::)*\w+(?:<[^;>]*>)?\s+\w+(?:\s*\[[^\]]*\])*\s*=)`)

// Metal's constant address space is read-only: a `constant` table passed
// to a `constant float*` parameter is a pointer to const. So `constant`
// becomes `const` (with a `const` beside it, one `const`), keeping what
// Metal checks and rejecting a store through a constant pointer.
// (`function_constant` and `is_function_constant_defined` are one word.)
var constantSpace = regexp.MustCompile(`\b(?:const[ \t]+)?constant\b(?:[ \t]+const\b)?`)

// `static constant constexpr const` (MLX's MLX_MTL_CONST) would be
// `const constexpr const`, a duplicate const: the second goes.
var spacedConst = regexp.MustCompile(`\bconst((?:[ \t]+(?:constexpr|static|inline))+)[ \t]+const\b`)

// The [[threadgroup(i)]] attribute of a parameter would lose its name to
// the emptied `threadgroup` qualifier ([[(0)]] does not parse): renamed, it
// is an attribute g++ ignores.
var threadgroupAttr = regexp.MustCompile(`\[\[\s*threadgroup\s*\(`)

// A GNU range initializer of a local array, `float s[N] = { [0 ... N-1] =
// 0.0f };`, which Apple's compiler (clang) takes and g++ does not in C++:
// it becomes a zeroed array whose lanes 0 through the range's end are then
// set (emu_fill_through in metal_stdlib).
var rangeInit = regexp.MustCompile(`\b(\w+)(\s+)(\w+)\s*\[([^\]]+)\]\s*=\s*\{\s*\[\s*0\s*\.\.\.\s*([^\]]+?)\s*\]\s*=\s*([^{};]+?)\s*\}`)

// Metal lets a member be overloaded on the address space of its object
// (`constexpr MD<T>() threadgroup = default;` beside `constexpr MD<T>() =
// default;`, candle's reduce.metal): once the address spaces are gone on
// the CPU these are one constructor twice. And a defaulted default
// constructor makes a struct no aggregate in C++20 (`MD<T>{ m, d }` would
// not compile) while Metal's C++14 keeps it one. So a struct's defaulted
// default constructors all go when it declares no other constructor (the
// one C++ declares implicitly is the same); when it does, the first stays,
// without its address space. A defaulted copy or move constructor with an
// address space goes too (the implicit one is the same).
var defaultedCtor = regexp.MustCompile(`(?m)^([ \t]*)((?:constexpr[ \t]+)?(\w+)(?:<[^;{}()]*>)?[ \t]*\(([^;{}()]*)\))[ \t]*(thread|threadgroup|device|constant)?[ \t]*=[ \t]*default[ \t]*;`)

func dropDefaultedCtors(src string) string {
	if !strings.Contains(src, "default") {
		return src
	}
	kept := map[string]bool{}
	return defaultedCtor.ReplaceAllStringFunc(src, func(m string) string {
		g := defaultedCtor.FindStringSubmatch(m)
		indent, decl, name, params, space := g[1], g[2], g[3], strings.TrimSpace(g[4]), g[5]
		if params != "" {
			if space == "" {
				return m
			}
			return ""
		}
		if !otherCtor(src, name) || kept[name] {
			return ""
		}
		kept[name] = true
		return indent + decl + " = default;"
	})
}

// otherCtor reports whether src declares a constructor of name that is
// not a defaulted default one: `name(` or `name<…>(` at the start of a
// declaration with something between the parentheses or a body.
func otherCtor(src, name string) bool {
	re := regexp.MustCompile(`(?m)^[ \t]*(?:(?:constexpr|explicit|inline|METAL_FUNC)[ \t]+)*` + regexp.QuoteMeta(name) + `(?:<[^;{}()=]*>)?[ \t]*\(([^;{}()]*)\)[^;{]*([;{])`)
	for _, g := range re.FindAllStringSubmatch(src, -1) {
		if strings.TrimSpace(g[1]) != "" || g[2] == "{" {
			return true
		}
	}
	return false
}

// forEmulation is the MSL text as g++ compiles it for the emulator's call
// (as UserCall or CallFor make it): threadgroup arrays static (one per
// emulated group) with their subscripts checked (checkThreadgroupIndexing), `constant` as `const`, range initializers spelled out,
// and a pointer named as the called [[host_name]] instantiation. build and
// CheckUser share it.
func forEmulation(full, call string) string {
	full = checkThreadgroupIndexing(full)
	full = dropDefaultedCtors(full)
	full = dropAddressSpaceOverloads(full)
	full = dropClassScopeSpecializations(full)
	full = programConstant.ReplaceAllString(full, "static const $1")
	full = constantSpace.ReplaceAllString(full, "const")
	full = spacedConst.ReplaceAllString(full, "const$1")
	full = threadgroupArray.ReplaceAllString(full, "${1}static $2")
	full = threadgroupAttr.ReplaceAllString(full, "[[emu_threadgroup(")
	full = rangeInit.ReplaceAllString(full, "${1}${2}${3}[${4}] = {}; emu_fill_through(${3}, ${5}, ${6})")
	entry, _, _ := strings.Cut(call, "(")
	return full + hostAlias(full, strings.TrimSpace(entry))
}

// hostAlias gives the [[host_name]] instantiation entry of src a function
// pointer of that name, which is what the emulator calls. Only the called
// one: the others may sit in a branch the preprocessor drops (ggml's
// bfloat instances without GGML_METAL_HAS_BF16), which the [[host_name]]
// scan cannot see.
func hostAlias(src, entry string) string {
	hosts, err := metal.HostNames(src)
	if err != nil {
		return ""
	}
	in, ok := hosts[entry]
	if !ok {
		return ""
	}
	return fmt.Sprintf("\nstatic auto* const %s = &%s<%s>;\n", entry, in.Template, strings.Join(in.Args, ", "))
}
