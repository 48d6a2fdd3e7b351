package csrc

import (
	"slices"
	"testing"
)

// Conds reads #if groups directive by directive: dead under `#if 0`, after
// the branch of an `#if 1`, and inside a dead group whatever its own
// conditions; live everywhere else.
func TestConds(t *testing.T) {
	var c Conds
	for i, step := range []struct {
		line          string
		dirDead, dead bool
	}{
		{"#if 0", false, true},
		{"#ifdef X", true, true}, // nested in a dead group
		{"#else", true, true},
		{"#endif", true, true},
		{"#else", false, false},
		{"#endif", false, false},
		{"#if 1", false, false},
		{"# elif FOO", false, true},
		{"#else", false, true},
		{"#endif", false, false},
		{"#ifdef X", false, false},
		{"#elif 0", false, true},
		{"#elif false", false, true},
		{"#else", false, false},
		{"#endif", false, false},
		{"#define N 4", false, false},
		{"#endif", false, false}, // a stray #endif changes nothing
	} {
		if got := c.Directive(step.line); got != step.dirDead || c.Dead() != step.dead {
			t.Errorf("step %d %q: directive dead %v, then dead %v; want %v, %v", i, step.line, got, c.Dead(), step.dirDead, step.dead)
		}
	}
}

// condValue decides conditions on NVRTC's own macros and leaves the rest
// unknown.
func TestCondValue(t *testing.T) {
	for _, c := range []struct {
		kind, cond string
		want       int8
	}{
		{"if", "0", -1},
		{"if", "1", 1},
		{"if", "true", 1},
		{"if", "defined(__CUDACC__)", 1},
		{"if", "defined __CUDACC__", 1},
		{"if", "!defined(__CUDACC__)", -1},
		{"if", "defined(__CUDACC_RTC__)", 1},
		{"if", "defined(__CUDA_ARCH__)", 1},
		{"if", "defined(__NVCC__)", -1}, // nvcc defines it, NVRTC does not
		{"if", "defined(__CUDACC__) || defined(__HIPCC__)", 1},
		{"if", "defined(__HIPCC__) || defined(__CUDACC__)", 1},
		{"if", "defined(__CUDACC__) && defined(WITH_X)", 0},
		{"if", "!defined(__CUDA_ARCH__) && defined(WITH_X)", -1},
		{"if", "(defined(__CUDACC__) || defined(__HIPCC__)) && !defined(__CUDACC_RTC__)", -1},
		{"if", "defined(WITH_X)", 0},
		{"if", "__CUDA_ARCH__ >= 800", 0},
		{"if", "defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", 0},
		{"if", "__has_include(<cuda_fp16.h>)", 0},
		{"if", "defined(__CUDACC__) || __HCC__ == 1 || __HIP__ == 1", 1},
		{"if", "__HIP__ == 1 || defined(__CUDA_ARCH__)", 1},
		{"if", "!defined(__CUDACC__) && X + 1 > -2", -1},
		{"if", "X << 2 >= ~Y", 0},
		{"if", "defined(__CUDACC__) ? 1 : 0", 0},
		{"if", "0x1", 0},
		{"elif", "defined(__CUDACC__)", 1},
		{"ifdef", "__CUDACC__", 1},
		{"ifdef", "__NVCC__", -1},
		{"ifdef", "WITH_X", 0},
		{"ifndef", "__CUDACC__", -1},
		{"ifndef", "__CUDACC_RTC__", -1},
		{"ifndef", "__NVCC__", 1},
		{"ifndef", "WITH_X", 0},
		{"elifndef", "__CUDA_ARCH__", -1},
	} {
		if got := condValue(c.kind, c.cond, nvrtcMacros); got != c.want {
			t.Errorf("#%s %s: %d, want %d", c.kind, c.cond, got, c.want)
		}
		if c.cond != "0" && c.cond != "1" && c.cond != "true" {
			if got := condValue(c.kind, c.cond, nil); got != 0 {
				t.Errorf("#%s %s with no compiler macros: %d, want unknown", c.kind, c.cond, got)
			}
		}
	}
}

// With values for some macros (Metal's reader: the Metal version the
// emulation claims), comparisons and arithmetic on them and on literals
// are decided; a name without a value keeps its part unknown.
func TestCondValueIn(t *testing.T) {
	known := Macros{"__METAL_VERSION__": true, "__HAVE_BFLOAT__": true, "__CUDACC__": false}
	values := map[string]int64{"__METAL_VERSION__": 310, "__HAVE_BFLOAT__": 1}
	for _, c := range []struct {
		kind, cond string
		want       int8
	}{
		{"if", "defined(__HAVE_BFLOAT__)", 1},
		{"if", "!defined(__HAVE_BFLOAT__)", -1},
		{"if", "__METAL_VERSION__ >= 220", 1},
		{"if", "__METAL_VERSION__ >= 320", -1},
		{"if", "__METAL_VERSION__ < 300 || defined(WITH_X)", 0},
		{"if", "(__METAL_VERSION__ >= 300) || defined(WITH_X)", 1},
		{"if", "defined(__METAL_VERSION__) && __METAL_VERSION__ == 310", 1},
		{"if", "__HAVE_BFLOAT__", 1},
		{"if", "__HAVE_BFLOAT__ && !defined(__CUDACC__)", 1},
		{"if", "(1 + 2) * 3 == 9 && -1 < 0", 1},
		{"if", "0x10 == 16 && 220u <= 310L", 1},
		{"if", "WITH_X >= 1", 0},
		{"if", "__METAL_VERSION__ / 0", 0},
		{"if", "F(1) > 0", 0},
		{"ifdef", "__HAVE_BFLOAT__", 1},
		{"ifndef", "__HAVE_BFLOAT__", -1},
	} {
		if got := condValueIn(c.kind, c.cond, known, values); got != c.want {
			t.Errorf("#%s %s: %d, want %d", c.kind, c.cond, got, c.want)
		}
	}
	var conds Conds
	conds.Known, conds.Values = known, values
	for i, step := range []struct {
		line string
		dead bool
	}{
		{"#if defined(__HAVE_BFLOAT__)", false},
		{"#else", true},
		{"#endif", false},
		{"#if __METAL_VERSION__ >= 400", true},
		{"#elif __METAL_VERSION__ >= 220", false},
		{"#endif", false},
	} {
		if conds.Directive(step.line); conds.Dead() != step.dead {
			t.Errorf("step %d %q: dead %v, want %v", i, step.line, conds.Dead(), step.dead)
		}
	}
}

// A macro defined one way for the CUDA compiler and another in the #else
// takes the compiler's definition: a function it marks is device code,
// not blanked as host code; code under a false condition is dead. A
// source that #defines or #undefs a compiler macro itself decides
// nothing on it after that.
func TestScanCompilerMacros(t *testing.T) {
	for _, c := range []struct {
		name, src string
		device    bool // twice is device code
		dead      []int
	}{
		{"if defined", "#if defined(__CUDACC__)\n#define HD __host__ __device__ inline\n#else\n#define HD inline\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{4}},
		{"ifdef", "#ifdef __CUDACC__\n#define HD __host__ __device__\n#else\n#define HD\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{4}},
		{"ifndef", "#ifndef __CUDA_ARCH__\n#define HD\n#else\n#define HD __device__\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{2}},
		{"nvcc is not nvrtc", "#ifdef __NVCC__\n#define HD\n#else\n#define HD __device__\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{2}},
		{"rocm is not nvrtc", "#ifndef USE_ROCM\n#define HD __device__\n#else\n#define HD\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{4}},
		{"hip is not nvrtc", "#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)\n#define HD\n#else\n#define HD __device__\n#endif\nHD float twice(float v) { return v + v; }\n", true, []int{2}},
		// an undecided condition keeps both branches live, and the words of
		// both definitions: either may be compiled, so twice is kept
		{"unknown stays both", "#ifdef WITH_X\n#define HD __device__\n#else\n#define HD\n#endif\nHD float twice(float v) { return v + v; }\n", true, nil},
		{"undef forgets", "#undef __CUDACC__\n#ifdef __CUDACC__\n#define HD __device__\n#else\n#define HD\n#endif\nHD float twice(float v) { return v + v; }\n", true, nil},
		{"arithmetic unknown, device in the #if (glm)", "#if (CC & CC_CUDA) || (CC & CC_HIP)\n#\tif defined(FORCE_HOST)\n#\t\tdefine DECL __host__\n#\telse\n#\t\tdefine DECL __device__ __host__\n#\tendif\n#else\n#\tdefine DECL\n#endif\n#define FDECL [[nodiscard]] DECL\ntemplate<typename T> FDECL T twice(T v);\n", true, nil},
		{"arithmetic unknown, device in the #else", "#if CC >= 3\n#define HD\n#elif CC == 2\n#define HD inline\n#else\n#define HD __device__\n#endif\nHD float twice(float v) { return v + v; }\n", true, nil},
		{"a later #define replaces", "#define HD __device__\n#undef HD\n#define HD\nHD float twice(float v) { return v + v; }\n", false, nil},
		{"a later group's #define replaces", "#ifdef A\n#define HD __device__\n#endif\n#ifdef B\n#define HD\n#endif\nHD float twice(float v) { return v + v; }\n", false, nil},
	} {
		f := Scan(c.src)
		var got *Decl
		for i := range f.Decls {
			if slices.Contains(f.Decls[i].Names, "twice") {
				got = &f.Decls[i]
			}
		}
		if got == nil {
			t.Errorf("%s: no twice in %+v", c.name, f.Decls)
			continue
		}
		if got.Host() == c.device {
			t.Errorf("%s: twice host %v, want %v", c.name, got.Host(), !c.device)
		}
		var dead []int
		for _, d := range f.Directives {
			if d.Dead {
				dead = append(dead, d.Line)
			}
		}
		if !slices.Equal(dead, c.dead) {
			t.Errorf("%s: dead directives on lines %v, want %v", c.name, dead, c.dead)
		}
	}
}

// ScanIn decides conditions by the macros it is given: NVRTC's view
// (Scan) takes host code under `#ifndef __CUDA_ARCH__` as dead, the host
// view (HostMacros) reads it; a name given defined or not decides its
// #ifdef, over NVRTC's own (USE_ROCM); nil decides none.
func TestScanIn(t *testing.T) {
	launcher := func(cond string) string {
		return cond + "\nvoid launch(float* y) { }\n#else\n__global__ void k(float* y) {\n#endif\n}\n"
	}
	defs := NVRTCMacros()
	defs["MY_FLAG"], defs["USE_ROCM"] = true, true
	for _, c := range []struct {
		name, src string
		macros    Macros
		want      string // the function read
	}{
		{"nvrtc: host code is dead", launcher("#ifndef __CUDA_ARCH__"), NVRTCMacros(), "k"},
		{"host view reads it", launcher("#ifndef __CUDA_ARCH__"), HostMacros(), "launch"},
		{"host view, !defined", launcher("#if !defined(__CUDA_ARCH__)"), HostMacros(), "launch"},
		{"host view keeps HIP out", launcher("#ifdef __HIPCC__"), HostMacros(), "k"},
		{"unknown: the first branch", launcher("#ifndef MY_FLAG"), NVRTCMacros(), "launch"},
		{"a define decides", launcher("#ifndef MY_FLAG"), defs, "k"},
		{"a define over nvrtc's own", launcher("#ifndef USE_ROCM"), defs, "k"},
		{"nil decides nothing", launcher("#ifndef __CUDA_ARCH__"), nil, "launch"},
	} {
		var got []string
		for _, d := range ScanIn(c.src, c.macros).Decls {
			if d.Kind == Function {
				got = append(got, d.Names...)
			}
		}
		if !slices.Equal(got, []string{c.want}) {
			t.Errorf("%s: functions %v, want [%s]", c.name, got, c.want)
		}
	}
	if f := Scan(launcher("#ifndef __CUDA_ARCH__")); len(f.Decls) != 1 || f.Decls[0].Names[0] != "k" {
		t.Errorf("Scan is NVRTC's view: %+v", f.Decls)
	}
}
