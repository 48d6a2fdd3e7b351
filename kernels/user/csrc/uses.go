package csrc

import "sort"

// NamesReached are the names the code of the launched kernels reaches: a
// kernel skip does not pick, the functions, variables and types it names,
// and theirs, transitively, each macro it uses read through the #define in
// effect where it is used. This is what Metal asks values of when it
// specialises a kernel: a function constant that only kernels no
// dispatch launches read (MLX's vjp kernels beside the forward one), or
// only helpers of those (ggml's mul_mv helpers in a file whose
// kernel_sum_rows is launched), needs none. When src has no definition of
// a launched kernel (a macro writes them all), every declaration but the
// skipped kernels counts as reached.
func NamesReached(src string, skip func(kernel string) bool) map[string]bool {
	f := Scan(src)
	r := &reach{f: f, byName: map[string][]int{}, done: map[int]bool{}, names: map[string]bool{}, macros: macroHistory(f), read: map[macroRead]bool{}}
	var roots []int
	for i, d := range f.Decls {
		if len(d.Names) == 0 {
			continue
		}
		kernel := d.Kind == Function && r.isKernel(d)
		if kernel && skip(d.Names[0]) {
			continue // never reached, even where an instantiation names it
		}
		for _, n := range d.Names {
			r.byName[n] = append(r.byName[n], i)
		}
		if kernel && d.Definition {
			roots = append(roots, i)
		}
	}
	if len(roots) == 0 {
		for _, idx := range r.byName {
			roots = append(roots, idx...)
		}
	}
	for _, i := range roots {
		r.visit(i)
	}
	return r.names
}

// reach walks the declarations the launched kernels reach.
type reach struct {
	f      *File
	byName map[string][]int // name → the declarations that may be reached by it
	done   map[int]bool
	names  map[string]bool
	macros map[string][]macroState
	read   map[macroRead]bool // the #defines whose replacement was read
}

// macroRead is one #define of a macro: its name and its place in the
// macro's history.
type macroRead struct {
	name string
	k    int
}

// macroState is a #define (body) or an #undef (undef) of a macro, at a
// byte offset of the source.
type macroState struct {
	at    int
	body  []string
	undef bool
}

// macroHistory lists, per macro name, its live #defines and #undefs in
// source order.
func macroHistory(f *File) map[string][]macroState {
	out := map[string][]macroState{}
	for _, d := range f.Directives {
		switch {
		case d.Dead:
		case d.Kind == "define" && d.Defines != "":
			out[d.Defines] = append(out[d.Defines], macroState{at: d.Start, body: d.Body})
		case d.Kind == "undef" && len(d.Tests) == 1:
			out[d.Tests[0]] = append(out[d.Tests[0]], macroState{at: d.Start, undef: true})
		}
	}
	return out
}

// isKernel says whether a function declaration is a kernel (`kernel`,
// `[[kernel]]`, `__global__` before its name). The parentheses of an
// attribute (`[[host_name("k")]] kernel void k(…)`, as ggml writes its
// non-template kernels, where the declaration starts inside the `[[`)
// are not the parameter list's, nor are those of a template parameter
// list (ggml's kernel_get_rows_q takes `void (*dequantize_func)(…)`).
func (r *reach) isKernel(d Decl) bool {
	toks := r.f.declTokens(d)
	depth := 0 // inside [[…]]
	for i := 0; i < len(toks); i++ {
		switch toks[i].text {
		case "template":
			if end := templateParamsEnd(toks, i+1); end > 0 {
				i = end
			}
		case "[[":
			depth++
		case "]]":
			depth = max(depth-1, 0)
		case "kernel", "__global__":
			return true
		case "(":
			if depth > 0 {
				continue
			}
			end := matchingParen(toks, i)
			if end < 0 || end+1 >= len(toks) || toks[end+1].text != "]]" {
				return false
			}
			i = end // an attribute's arguments, its `[[` before the declaration
		}
	}
	return false
}

// templateParamsEnd is the index of the ">" closing the template
// parameter list whose "<" is toks[open], or -1 when toks[open] is no "<":
// a ">" inside parentheses (a function pointer's parameters) or nested
// angles does not close it.
func templateParamsEnd(toks []ltok, open int) int {
	if open >= len(toks) || toks[open].text != "<" {
		return -1
	}
	angles, parens := 0, 0
	for i := open; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			parens++
		case ")":
			parens--
		case "<":
			if parens == 0 {
				angles++
			}
		case ">":
			if parens == 0 {
				if angles--; angles == 0 {
					return i
				}
			}
		case ">>":
			if parens == 0 {
				if angles -= 2; angles <= 0 {
					return i
				}
			}
		}
	}
	return -1
}

// matchingParen is the index of the ")" closing the "(" at toks[open], or -1.
func matchingParen(toks []ltok, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// visit marks the names declaration i uses and visits what they name.
func (r *reach) visit(i int) {
	if r.done[i] {
		return
	}
	r.done[i] = true
	for _, t := range r.f.declTokens(r.f.Decls[i]) {
		if t.kind == Ident {
			r.use(t.text, t.start, 0)
		}
	}
}

// use marks name, used at byte offset at: the declarations it names are
// visited, and the replacement of the #define in effect there is read
// (once per #define: a macro in it is taken as defined at its first use).
func (r *reach) use(name string, at, depth int) {
	r.names[name] = true
	for _, j := range r.byName[name] {
		r.visit(j)
	}
	hist := r.macros[name]
	if len(hist) == 0 || depth > 16 {
		return
	}
	k := sort.Search(len(hist), func(k int) bool { return hist[k].at >= at }) - 1
	if k < 0 || hist[k].undef || r.read[macroRead{name, k}] {
		return
	}
	r.read[macroRead{name, k}] = true
	for _, w := range hist[k].body {
		r.use(w, at, depth+1)
	}
}
