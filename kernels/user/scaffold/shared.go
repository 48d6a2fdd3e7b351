package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// sharedDecl matches a static shared array: CUDA __shared__ or Metal
// threadgroup, a type (of several words too: `unsigned int`, `unsigned
// long long`, `signed char`), a name and one or more [extent]s.
var sharedDecl = regexp.MustCompile(`(?m)(extern\s+)?(?:__shared__|\bthreadgroup)\s+(?:volatile\s+)?(?:__align__\(\d+\)\s+)?((?:(?:unsigned|signed|long|short)\s+)*[A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+)`)

// typeFirst is a shared declaration that writes its type ahead of
// __shared__ (`extern double __shared__ sdata[];`, cuda-samples'
// reductionMultiBlockCG): sharedItems reads it as `extern __shared__
// double sdata[];`.
var typeFirst = regexp.MustCompile(`(\bextern\s+)?\b([A-Za-z_][\w:]*)\s+__shared__\s`)

// sharedFirst rewrites typeFirst declarations with __shared__ first; a
// storage word ahead of __shared__ (static, volatile) stays.
func sharedFirst(body string) string {
	return typeFirst.ReplaceAllStringFunc(body, func(m string) string {
		g := typeFirst.FindStringSubmatch(m)
		switch g[2] {
		case "static", "volatile", "extern", "const":
			return m
		}
		return g[1] + "__shared__ " + g[2] + " "
	})
}

// moreDecl is one more array of a declaration (`, k[_N_]`).
var moreDecl = regexp.MustCompile(`^\s*,\s*([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+)`)

// sharedDecls are sharedDecl's matches in body, one per array: a
// declaration of several (`__shared__ float r[_N_], k[_N_];`, RWKV's wkv
// kernels) gives each its own, with the declaration's extern and type and
// its own text as m[0].
func sharedDecls(body string) [][]string {
	var out [][]string
	for _, ix := range sharedDecl.FindAllStringSubmatchIndex(body, -1) {
		m := make([]string, 5)
		for g := range m {
			if ix[2*g] >= 0 {
				m[g] = body[ix[2*g]:ix[2*g+1]]
			}
		}
		out = append(out, m)
		for end := ix[1]; ; {
			mm := moreDecl.FindStringSubmatchIndex(body[end:])
			if mm == nil {
				break
			}
			name, ext := body[end+mm[2]:end+mm[3]], body[end+mm[4]:end+mm[5]]
			decl := strings.TrimSpace(body[ix[0]:ix[6]]) + " " + name + strings.TrimSpace(ext)
			out = append(out, []string{decl, m[1], m[2], name, ext})
			end += mm[1]
		}
	}
	return out
}

// extentRE is one [extent] of a declaration.
var extentRE = regexp.MustCompile(`\[([^\]]*)\]`)

// scalarBytes are the sizes of Metal element types user.ElemBytes does not
// list (it holds the CUDA and C ones).
var scalarBytes = map[string]int{"ushort": 2, "uchar": 1, "float3": 12, "half4": 8}

// sharedItems suggests a tgm: item for each static shared array in the
// entry's body: its bytes as a number or an expression of knobs and dims,
// else a commented TODO line saying what is unknown. The extern (unsized)
// arrays, sized at launch, are dynamic: the dispatch's dynamic_tgm TODO
// names them.
func (c *context) sharedItems(p *plan, k *kernelScan, body string) (items, dynamic []string) {
	macros := csrc.ObjectMacros(csrc.Scan(c.src))
	known := map[string]bool{}
	for n, kind := range p.taken {
		if kind == "knob" || kind == "dim" {
			known[n] = true
			delete(macros, n) // mltop #defines it: the manifest's name
		}
	}
	for _, cn := range fileConstants(c.src) {
		// a file-scope `const int BLOCKWIDTH = 256;` is a name manifest
		// expressions may use (the source's constants), as check writes it
		if _, macro := macros[cn.name]; cn.what == "constant" && !macro {
			known[cn.name] = true
		}
	}
	locals := user.LocalIntConsts(body)
	// unsized are the TODO items by array, type and reason: one line
	// each, the other declarations' extents listed on it (candle's
	// reduce_switch declares `threadgroup I shared[N]` in 11 cases)
	type unsized struct {
		at         int // its line in items
		decl, todo string
		more       []string // the other declarations' extents
	}
	var todos []*unsized
	seen := map[string]*unsized{}
	for _, m := range sharedDecls(sharedFirst(body)) {
		typ, name, ext := strings.Join(strings.Fields(m[2]), " "), m[3], m[4]
		if m[1] != "" {
			dynamic = append(dynamic, name)
			continue
		}
		s := &user.ExtentResolver{Macros: macros, Known: func(n string) bool { return known[n] }, TemplateArgs: k.targs, Locals: locals, DType: c.dtypeName}
		var extents []string
		for _, e := range extentRE.FindAllStringSubmatch(ext, -1) {
			extents = append(extents, strings.TrimSpace(e[1]))
		}
		decl := strings.TrimSpace(m[0])
		bytes, todo := sharedBytes(s, typ, extents)
		if todo != "" {
			key := name + "\x00" + typ + "\x00" + todo
			if u := seen[key]; u != nil {
				u.more = append(u.more, strings.TrimSpace(ext))
				continue
			}
			u := &unsized{at: len(items), decl: decl, todo: todo}
			seen[key] = u
			todos = append(todos, u)
			items = append(items, "")
			continue
		}
		items = append(items, fmt.Sprintf("- {name: %s, bytes: \"%s\"}   # %s", name, bytes, decl))
	}
	for _, u := range todos {
		also := ""
		if len(u.more) > 0 {
			also = fmt.Sprintf(" (and %d more of the same type: %s)", len(u.more), strings.Join(u.more, ", "))
		}
		name := sharedDecl.FindStringSubmatch(u.decl)[3]
		items[u.at] = fmt.Sprintf("# - {name: %s, bytes: \"TODO\"}   # TODO: bytes of %s%s: %s", name, u.decl, also, u.todo)
	}
	return items, dynamic
}

// sharedBytes is an array's bytes as a manifest expression (a number when
// it is constant), its extents in the terms `mltop check` suggests them
// (user.ExtentResolver, check's own): the source's integer macros and
// constants are their values, the knobs and dims the plan made are their
// names (a macro a knob now sets among them: TILE of an #ifndef TILE), the
// entry's template parameters are the entry's template arguments, and the
// body's own integer constants their initializers. Else it is a TODO
// saying what the manifest cannot say.
func sharedBytes(s *user.ExtentResolver, typ string, extents []string) (bytes, todo string) {
	var factors []string
	for _, e := range extents {
		factors = append(factors, user.Parenthesize(s.Resolve(e)))
	}
	if arg, ok := s.TemplateArgs[typ]; ok {
		typ = arg
	}
	elem := ""
	switch n, ok := user.ElemBytes(typ); {
	case typ == s.DType || typ == "T":
		elem = "sizeof(" + typ + ")"
	case ok:
		elem = strconv.Itoa(n)
	case scalarBytes[typ] > 0:
		elem = strconv.Itoa(scalarBytes[typ])
	}
	switch {
	case len(s.Unknown()) > 0:
		return "", fmt.Sprintf("its size uses %s, which no knob or dim names", strings.Join(s.Unknown(), ", "))
	case elem == "":
		return "", fmt.Sprintf("mltop does not know the size of %s", typ)
	}
	expr := strings.Join(append(factors, elem), " * ")
	if v, ok := csrc.IntConst(expr, nil); ok {
		return strconv.FormatInt(v, 10), ""
	}
	return expr, ""
}
