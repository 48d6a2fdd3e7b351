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

// The [[threadgroup(i)]] attribute of a parameter would lose its name to
// the emptied `threadgroup` qualifier ([[(0)]] does not parse): renamed, it
// is an attribute g++ ignores.
var threadgroupAttr = regexp.MustCompile(`\[\[\s*threadgroup\s*\(`)

// A GNU range initializer of a local array, `float s[N] = { [0 ... N-1] =
// 0.0f };`, which Apple's compiler (clang) takes and g++ does not in C++:
// it becomes a zeroed array whose lanes 0 through the range's end are then
// set (emu_fill_through in metal_stdlib).
var rangeInit = regexp.MustCompile(`\b(\w+)(\s+)(\w+)\s*\[([^\]]+)\]\s*=\s*\{\s*\[\s*0\s*\.\.\.\s*([^\]]+?)\s*\]\s*=\s*([^{};]+?)\s*\}`)

// forEmulation is the MSL text as g++ compiles it for the emulator's call
// (as UserCall or CallFor make it): threadgroup arrays static (one per
// emulated group), `constant` as `const`, range initializers spelled out,
// and a pointer named as the called [[host_name]] instantiation. build and
// CheckUser share it.
func forEmulation(full, call string) string {
	full = programConstant.ReplaceAllString(full, "static const $1")
	full = constantSpace.ReplaceAllString(full, "const")
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
