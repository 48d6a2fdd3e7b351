package lint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// sharedArray is one __shared__ or threadgroup array a function declares.
type sharedArray struct {
	Name, Elem string
	Extents    []string // the texts between the brackets, one per dimension ("" for extern [])
	Func       string   // the function that declares it
}

func (a sharedArray) String() string { return a.Name + "[" + strings.Join(a.Extents, "][") + "]" }

// Size is the element count as an expression of the extents, "" for an
// extern (unsized) array: `s[4][10 * 16]` is "4 * (10 * 16)".
func (a sharedArray) Size() string {
	if len(a.Extents) == 0 || a.Extents[0] == "" {
		return ""
	}
	if len(a.Extents) == 1 {
		return a.Extents[0]
	}
	parts := make([]string, len(a.Extents))
	for i, e := range a.Extents {
		parts[i] = "(" + e + ")"
	}
	return strings.Join(parts, " * ")
}

// functionBodies maps each function name the source defines to the texts
// of its definitions (overloads and templates alike).
func functionBodies(code string) map[string][]string {
	out := map[string][]string{}
	for _, d := range csrc.Scan(code).Decls {
		if d.Kind == csrc.Function && d.Definition && d.End <= len(code) {
			for _, n := range d.Names {
				out[n] = append(out[n], code[d.Start:d.End])
			}
		}
	}
	return out
}

// reachableShared are the shared arrays declared in entry and in the
// functions it calls, directly or through others, in call order. An array
// that overloads of one function declare alike (DeepSpeed's float and
// __half fused_bias_residual_layer_norm, each with `__shared__ float
// shr[MAX_WARP_NUM]`) is one array: a launch runs one overload, so it is
// listed once.
func reachableShared(bodies map[string][]string, entry string) []sharedArray {
	var out []sharedArray
	declared := map[string]bool{}
	seen := map[string]bool{entry: true}
	queue := []string{entry}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, body := range bodies[fn] {
			toks := csrc.Tokenize(body)
			for _, a := range sharedArraysIn(toks, fn) {
				key := a.Func + "\x00" + a.Elem + "\x00" + a.String()
				if !declared[key] {
					declared[key] = true
					out = append(out, a)
				}
			}
			for _, t := range toks {
				if t.Kind == csrc.Ident && !seen[t.Text] && bodies[t.Text] != nil {
					seen[t.Text] = true
					queue = append(queue, t.Text)
				}
			}
		}
	}
	return out
}

// sharedArraysIn finds `__shared__ float partial[32];` and
// `threadgroup T buf[WG];` (a threadgroup pointer parameter is no array,
// nor `threadgroup float * rows[NR0]`, pointers kept in thread memory).
func sharedArraysIn(toks []csrc.Token, fn string) []sharedArray {
	var out []sharedArray
	for i, t := range toks {
		if t.Text != "__shared__" && t.Text != "threadgroup" {
			continue
		}
		for j := i + 1; j < len(toks) && j < i+16; j++ {
			if toks[j].Text == "(" { // __align__(16), alignas(16)
				j = csrc.Matching(toks, j)
				continue
			}
			if toks[j].Text == ";" || toks[j].Text == "," || toks[j].Text == ")" || toks[j].Text == "[[" || toks[j].Text == "=" {
				break
			}
			if toks[j].Text == "*" || toks[j].Text == "&" { // a pointer to (or reference into) shared memory
				break
			}
			if toks[j].Text != "[" || toks[j-1].Kind != csrc.Ident {
				continue
			}
			elem := toks[j-2].Text
			if j-2 <= i {
				// the type ahead of the keyword: `extern double __shared__
				// sdata[];` (cuda-samples' reductionMultiBlockCG)
				if elem = typeBefore(toks, i); elem == "" {
					continue
				}
			}
			// one declaration may declare several arrays: `__shared__
			// float r[_N_], k[_N_], u[_N_];` (RWKV's wkv kernels)
			for k := j; ; {
				a := sharedArray{Name: toks[k-1].Text, Elem: elem, Func: fn}
				for ; k < len(toks) && toks[k].Text == "["; k++ { // s[4][160]: every dimension
					end := k + 1
					for end < len(toks) && toks[end].Text != "]" {
						end++
					}
					var size []string
					for _, s := range toks[k+1 : min(end, len(toks))] {
						size = append(size, s.Text)
					}
					a.Extents = append(a.Extents, strings.Join(size, " "))
					k = end
				}
				out = append(out, a)
				if k+2 >= len(toks) || toks[k].Text != "," || toks[k+1].Kind != csrc.Ident || toks[k+2].Text != "[" {
					break
				}
				k += 2
			}
			break
		}
	}
	return out
}

// typeBefore is the type written ahead of the __shared__ at toks[i]
// (`extern double __shared__ s[]`), past volatile; "" when none is.
func typeBefore(toks []csrc.Token, i int) string {
	for k := i - 1; k >= 0; k-- {
		switch t := toks[k]; {
		case t.Text == "volatile":
			continue
		case t.Kind == csrc.Ident && t.Text != "extern" && t.Text != "static":
			return t.Text
		}
		return ""
	}
	return ""
}

// lintUnsizedShared warns, per dispatch, about an extern (unsized) shared
// array that nothing sizes at launch and, when the dispatch has no tgm:
// items, about the sized arrays its entry and the helpers it calls
// declare. Without dynamic_tgm, a CUDA launch gives the tgm: items' bytes
// beyond the static arrays' as dynamic shared memory: an item that names
// no sized array sizes the extern one.
func lintUnsizedShared(r *Result, lang, code string) {
	f := r.Family
	bodies := functionBodies(code)
	unfilledCode := f.UnfilledSource(lang) // an MLX body before its placeholders are filled
	if unfilledCode == f.Source(lang) {
		unfilledCode = code // with the local headers
	}
	unfilled := functionBodies(unfilledCode)
	macros := f.SourceMacros(lang)
	others := user.LocalIntConsts(f.UnfilledSource(lang))
	for _, d := range f.DispatchInfos() {
		arrays := reachableShared(bodies, csrc.EntryFunction(d.Entry))
		if len(arrays) == 0 {
			continue
		}
		var decls, items, todos, twice, static []string
		unsized := false
		for _, a := range arrays {
			if a.Size() == "" { // extern __shared__ x[]: sized at launch by dynamic_tgm, not by a tgm: item
				unsized = true
				if d.DynamicTGM && slices.Contains(d.TGM, a.Name) {
					twice = append(twice, a.Name)
				}
				continue
			}
			static = append(static, a.Name)
			decls = append(decls, fmt.Sprintf("%s %s (in %s)", sharedKeyword(lang), a, a.Func))
			res := &user.ExtentResolver{Macros: macros, Locals: user.LocalIntConsts(unfilled[a.Func]...), Others: others, Known: f.KnowsName, DType: f.DTypeName()}
			if a.Func == csrc.EntryFunction(d.Entry) {
				res.TemplateArgs = entryTemplateArgs(f, lang, d)
			}
			bytes, todo := suggestedBytes(f, a, res)
			items = append(items, fmt.Sprintf("{name: %s, bytes: %s}", a.Name, bytes))
			if todo != "" {
				todos = append(todos, todo)
			}
		}
		line, col := f.Pos(fmt.Sprintf("$.dispatches[%d]", d.Index))
		sizedByItems := lang == "cuda" && slices.ContainsFunc(d.TGM, func(item string) bool { return !slices.Contains(static, item) })
		if unsized && !d.DynamicTGM && !sizedByItems {
			r.add(Warning, StepSource, f.Path(), line, col,
				"dispatch %s's kernel declares an extern (unsized) shared array, sized at launch, but the dispatch sets no dynamic_tgm: add `dynamic_tgm: <bytes>` (what the launch's third <<<…>>> argument gives)", d.Name)
		}
		if len(twice) > 0 {
			r.add(Warning, StepSource, f.Path(), line, col,
				"dispatch %s lists the extern shared array %s as a tgm: item and sets dynamic_tgm: the TGM budget and its limit count those bytes twice; drop the tgm: item (dynamic_tgm is its line)", d.Name, strings.Join(slices.Compact(twice), ", "))
		}
		if len(items) == 0 || len(d.TGM) > 0 {
			continue
		}
		todo := ""
		if len(todos) > 0 {
			todo = " (TODO: " + strings.Join(todos, "; ") + ")"
		}
		r.add(Warning, StepSource, f.Path(), line, col,
			"the source declares %s but dispatch %s lists no tgm: items: the TGM budget shows 0 B; add e.g. `tgm: [%s]`%s",
			strings.Join(slices.Compact(decls), ", "), d.Name, strings.Join(items, ", "), todo)
	}
}

// suggestedBytes is a sized array's tgm: bytes as the manifest can say
// them, or "TODO" with what to write when an extent or the element's size
// is beyond the manifest's names.
func suggestedBytes(f *user.Family, a sharedArray, res *user.ExtentResolver) (bytes, todo string) {
	size := res.Resolve(a.Size())
	elem := a.Elem
	if arg, ok := res.TemplateArgs[elem]; ok {
		elem = arg
	}
	n, known := user.ElemBytes(elem)
	if elem == f.DTypeName() {
		known = true
		for _, dt := range f.Schema().DTypes {
			n = max(n, dt.Size())
		}
	}
	switch {
	case len(res.Unknown()) > 0:
		unknown := res.Unknown()
		return `"TODO"`, fmt.Sprintf("%s's size %s uses %s, which a manifest expression does not know: write its bytes, or declare %s in the manifest", a.Name, a.Size(), strings.Join(unknown, ", "), unknown[0])
	case !known:
		return `"TODO"`, fmt.Sprintf("%s holds %s, whose size mltop does not know: write %s times its bytes", a.Name, a.Elem, size)
	}
	return tgmBytes(size, n), ""
}

// entryTemplateArgs maps the entry's template parameters to the template
// arguments the dispatch's entry gives them: `k<T, WG * 2>` with
// `template <typename F, int BLOCK>` is F → T, BLOCK → WG * 2.
func entryTemplateArgs(f *user.Family, lang string, d user.DispatchInfo) map[string]string {
	sig, _, ok := f.EntryAt(lang, d.Index)
	_, list, has := strings.Cut(d.Entry, "<")
	if !ok || !has || !strings.HasSuffix(strings.TrimSpace(list), ">") {
		return nil
	}
	list = strings.TrimSuffix(strings.TrimSpace(list), ">")
	out := map[string]string{}
	depth, start, k := 0, 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '<', '(', '{', '[':
				depth++
				continue
			case '>', ')', '}', ']':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if k < len(sig.Template) {
			arg := strings.TrimSpace(list[start:i])
			if strings.HasPrefix(arg, "{") && strings.HasSuffix(arg, "}") { // {expr}: an expression of the manifest's names
				arg = strings.TrimSpace(arg[1 : len(arg)-1])
			}
			out[sig.Template[k]] = arg
		}
		start, k = i+1, k+1
	}
	return out
}

// tgmBytes is a tgm: item's bytes for size elements of n bytes each: a
// number when size is one, else a quoted expression.
func tgmBytes(size string, n int) string {
	if v, err := strconv.ParseInt(size, 10, 64); err == nil {
		return strconv.FormatInt(v*int64(n), 10)
	}
	return strconv.Quote(fmt.Sprintf("%s * %d", size, n))
}
