package csrc

// UsedOutsideKernels says whether src names name anywhere but in the
// kernels that skip picks (by their own name, signature and body) and in
// a Metal function constant's declaration of it. A source that keeps
// several kernels in one file (MLX's rms_norm.metal: the forward kernel and
// the vjp kernels that read a function constant) uses the name for a
// dispatch only when it appears outside the kernels the dispatches do not
// launch: in a launched kernel, a helper, a global. Preprocessor lines are
// not read.
func UsedOutsideKernels(src, name string, skip func(kernel string) bool) bool {
	toks := Tokenize(src)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind == Ident && t.Text == name && !constantDecl(toks, i) {
			return true
		}
		if end, ok := skippedKernel(toks, i, skip); ok {
			i = end
		}
	}
	return false
}

// constantDecl says whether toks[i] is the name in
// `constant T name [[function_constant(n)]]`.
func constantDecl(toks []Token, i int) bool {
	return i+2 < len(toks) && toks[i+1].Text == "[[" && toks[i+2].Text == "function_constant"
}

// skippedKernel reads a kernel that starts at toks[i] (`kernel`,
// `[[kernel]]` or `__global__`) and, when skip picks it, returns the index
// of its body's closing brace.
func skippedKernel(toks []Token, i int, skip func(string) bool) (int, bool) {
	t := toks[i].Text
	isKernel := t == "__global__" || t == "kernel"
	if t == "[[" && i+2 < len(toks) && toks[i+1].Text == "kernel" && toks[i+2].Text == "]]" {
		isKernel = true
	}
	if !isKernel {
		return 0, false
	}
	j, ok := entryName(toks, i+1)
	if !ok || toks[j-1].Text == "decltype" || !skip(toks[j-1].Text) {
		return 0, false
	}
	end := skipGroup(toks, j, "(", ")")
	for k := end + 1; k < len(toks); k++ {
		switch toks[k].Text {
		case "{":
			return skipGroup(toks, k, "{", "}"), true
		case ";": // a declaration without a body
			return k, true
		}
	}
	return len(toks) - 1, true
}
