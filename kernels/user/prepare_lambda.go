package user

import (
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file drops the execution-space annotations of lambdas in device
// code: `[=] __device__ (float& d, float v) { … }` (vLLM's vectorized
// loops, Thrust-style functors). nvcc accepts them with --extended-lambda
// only; NVRTC rejects them ("requires --extended-lambda nvcc flag"). In
// device code a lambda is a device lambda already, so the annotation adds
// nothing there: it becomes spaces (columns kept, so messages keep the
// user's positions). Host code, where the annotation matters, is blanked.

// lambdaAnnotations are the edits blanking the __device__ and __host__
// words (or object-like macros that write only those, C10_HOST_DEVICE)
// right after a lambda's capture list in u's code that reaches NVRTC.
func lambdaAnnotations(u *unit, macros map[string]string) []lineEdit {
	annotation := func(w string) bool {
		if w == "__device__" || w == "__host__" {
			return true
		}
		words := expandWords(macros, w, 0)
		return len(words) > 0 && words[0] != w && !slices.ContainsFunc(words, func(x string) bool { return x != "__device__" && x != "__host__" })
	}
	var out []lineEdit
	for _, d := range u.scan.Decls {
		if d.Host() || d.End > len(u.code) || (d.Kind != csrc.Function && d.Kind != csrc.Type) {
			continue
		}
		text := u.code[d.Start:d.End]
		for i := strings.IndexByte(text, ']'); i >= 0; i = nextByte(text, ']', i+1) {
			if i > 0 && text[i-1] == ']' || i+1 < len(text) && text[i+1] == ']' {
				continue // an attribute, [[nodiscard]]
			}
			var words []lineEdit
			j := i + 1
			for {
				j += len(text[j:]) - len(strings.TrimLeft(text[j:], " \t\r\n"))
				w := identifier.FindString(text[j:])
				if w == "" || !strings.HasPrefix(text[j:], w) || !annotation(w) {
					break
				}
				words = append(words, editAt(u.code, d.Start+j, w, strings.Repeat(" ", len(w))))
				j += len(w)
			}
			rest := text[j:]
			if len(words) > 0 && (strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, "{") || strings.HasPrefix(rest, "mutable") || strings.HasPrefix(rest, "->")) {
				out = append(out, words...)
			}
		}
	}
	return out
}

// nextByte is the index of the first c in s at or after from, or -1.
func nextByte(s string, c byte, from int) int {
	if from >= len(s) {
		return -1
	}
	if k := strings.IndexByte(s[from:], c); k >= 0 {
		return from + k
	}
	return -1
}
