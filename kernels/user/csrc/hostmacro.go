package csrc

import (
	"slices"
	"strings"
)

// hostMacro says whether the file-scope macro invocation name(…), followed
// by a body at toks[body:end] when body >= 0, defines host functions that
// NVRTC cannot compile (PyTorch extensions end with both kinds):
//   - a function-like macro of this file whose replacement declares only
//     host functions or variables (TORCH_BINDING_ADD(f32, float) expanding
//     to `void add_f32(torch::Tensor a) { … }`);
//   - a macro the file does not define, given a body: a function defined
//     through a host header's macro (PYBIND11_MODULE(name, m) { … },
//     TORCH_LIBRARY(ops, m) { … }), unless its arguments or body read a
//     CUDA built-in (threadIdx, __syncthreads, …) or say __global__ or
//     __device__: that is device code behind a header's macro, and stays;
//   - a macro the file does not define, with no body, whose arguments name
//     a host function the file defined earlier: a registration through a
//     host header's macro (PyTorch's REGISTER_DISPATCH(cdist_stub,
//     &cdist_kernel_impl);), whose function is blanked, so the invocation
//     would name what is gone.
//
// The invocation's arguments start at toks[args]; earlier are the
// declarations read before it.
func (s *scanner) hostMacro(name string, args, body, end int, earlier []Decl) bool {
	if repl, ok := s.replacements[name]; ok {
		return s.replacementIsHost(repl)
	}
	if _, ok := s.macros[name]; ok {
		return false
	}
	for k := args; k < end && k < len(s.toks); k++ {
		if w := s.toks[k].text; deviceBuiltins[w] || w == "__global__" || w == "__device__" {
			return false
		}
	}
	if body >= 0 {
		return true
	}
	host := map[string]bool{}
	for _, d := range earlier {
		if d.Kind == Function && d.Definition && !d.Device {
			for _, n := range d.Names {
				host[n] = true
			}
		}
	}
	for k := args; k < end && k < len(s.toks); k++ {
		if s.toks[k].kind == Ident && host[s.toks[k].text] {
			return true
		}
	}
	return false
}

// replacementIsHost scans a macro's replacement text as file-scope code
// (token pasting and stringizing dropped) and says whether it declares
// something and all of it is host code.
func (s *scanner) replacementIsHost(repl string) bool {
	repl = strings.NewReplacer("##", " ", "#", " ").Replace(repl)
	l := lex(repl)
	sub := &scanner{toks: l.toks, macros: s.macros}
	var decls []Decl
	for i := 0; i < len(sub.toks); {
		i = sub.scope(i, "", &decls)
	}
	for _, d := range decls {
		if !d.Host() {
			return false
		}
	}
	return len(decls) > 0
}

// deviceBuiltins are names only device code reads.
var deviceBuiltins = map[string]bool{"threadIdx": true, "blockIdx": true, "blockDim": true, "gridDim": true,
	"warpSize": true, "__syncthreads": true, "__syncwarp": true, "__shfl_sync": true, "__shfl_xor_sync": true,
	"__shfl_down_sync": true, "__threadfence": true, "atomicAdd": true}

// addDefines records the live #defines of dirs: each macro's body
// identifiers, a function-like one's replacement text, and the braces a
// replacement leaves open or closes.
//
// A macro #defined in two live branches of one #if group whose condition
// the scan cannot decide (glm's `#if (GLM_COMPILER & GLM_COMPILER_CUDA)
// #define GLM_CUDA_FUNC_DECL __device__ __host__ #else #define
// GLM_CUDA_FUNC_DECL #endif`) keeps the identifiers of both: either may
// be the one compiled, and a declaration it marks __device__ in one is
// device code, never host code to blank.
func (s *scanner) addDefines(dirs []Directive) {
	var at []condBranch                // the #if groups open here, innermost last
	where := map[string][]condBranch{} // each macro's last #define's groups
	next := 0
	for _, d := range dirs {
		switch {
		case isOpen(d.Kind):
			next++
			at = append(at, condBranch{group: next})
		case isBranch(d.Kind) && len(at) > 0:
			at[len(at)-1].branch++
		case d.Kind == "endif" && len(at) > 0:
			at = at[:len(at)-1]
		}
		if d.Dead || d.Kind != "define" || d.Defines == "" {
			continue
		}
		if prev, ok := where[d.Defines]; ok && alternatives(prev, at) {
			s.macros[d.Defines] = unionWords(s.macros[d.Defines], d.Body)
		} else {
			s.macros[d.Defines] = d.Body
		}
		where[d.Defines] = slices.Clone(at)
		// a later #define of the name replaces an earlier one
		delete(s.replacements, d.Defines)
		delete(s.braces, d.Defines)
		if d.Replacement != "" {
			s.replacements[d.Defines] = d.Replacement
		}
		if n := braceBalance(d.Replacement + " " + d.Value); n != 0 {
			s.braces[d.Defines] = n
		}
	}
}

// condBranch is one open #if group (numbered in source order) and the
// branch of it being read (0: the #if, 1: the first #elif or #else, …).
type condBranch struct{ group, branch int }

// alternatives says whether two places lie in different branches of one
// #if group: only one of them is compiled.
func alternatives(a, b []condBranch) bool {
	for i := 0; i < len(a) && i < len(b) && a[i].group == b[i].group; i++ {
		if a[i].branch != b[i].branch {
			return true
		}
	}
	return false
}

// unionWords is a with the words of b it lacks appended.
func unionWords(a, b []string) []string {
	out := slices.Clone(a)
	for _, w := range b {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// braceBalance is how many more "{" than "}" the code text holds (outside
// literals and comments).
func braceBalance(text string) int {
	n := 0
	for _, t := range lex(text).toks {
		switch t.text {
		case "{":
			n++
		case "}":
			n--
		}
	}
	return n
}

// macroBraces returns the index after the code that closes the open
// braces a file-scope macro invocation left (ending before toks[j]):
// braces of the code and of the macros invoked in it (a function-like
// one's arguments skipped), then the ";" that may follow.
func (s *scanner) macroBraces(j, open int) int {
	t := s.toks
	for ; j < len(t) && open > 0; j++ {
		switch x := t[j].text; {
		case x == "{":
			open++
		case x == "}":
			open--
		case t[j].kind == Ident && s.braces[x] != 0:
			if _, fn := s.replacements[x]; fn && j+1 < len(t) && t[j+1].text == "(" {
				j = s.skip(j+1, "(", ")") - 1
			}
			open += s.braces[x]
		}
	}
	return j
}
