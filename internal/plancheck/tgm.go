package plancheck

import (
	"go/constant"
	"go/token"
	"go/types"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	tgmDefine = regexp.MustCompile(`^#define (\w+) (\(.*?\))\s*(//.*)?$`)
	tgmDecl   = regexp.MustCompile(`^\s*(?:threadgroup|__shared__(?: __align__\(\d+\))?) (\w+) (\w+)((?:\[[^\]]+\])+);`)
	tgmDim    = regexp.MustCompile(`\[([^\]]+)\]`)
	tgmIdent  = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// DeclaredTGM evaluates a kernel's static threadgroup arrays (Metal
// `threadgroup T name[e];`, CUDA `__shared__ T name[e1][e2];`) for the
// given macro values: the bytes per array name that the compiler reports,
// from the source text. It follows #if/#else/#endif on the macros (#ifdef
// and #ifndef blocks count as taken) and expands the file's parenthesised
// #defines in the taken branches; elem is the size of mltop_t / T.
func DeclaredTGM(t testing.TB, src string, macros map[string]int, elem int) map[string]int {
	t.Helper()
	defs := map[string]string{}
	for k, v := range macros {
		defs[k] = strconv.Itoa(v)
	}
	eval := func(e string) constant.Value {
		x := e
		for range 6 {
			x = tgmIdent.ReplaceAllStringFunc(x, func(id string) string {
				if d, ok := defs[id]; ok {
					return d
				}
				return id
			})
		}
		tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, x)
		if err != nil {
			t.Fatalf("evaluating %q (%q): %v", e, x, err)
		}
		return tv.Value
	}
	out := map[string]int{}
	var taken []bool
	on := func() bool {
		for _, a := range taken {
			if !a {
				return false
			}
		}
		return true
	}
	for _, l := range strings.Split(src, "\n") {
		tl := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(tl, "#if "):
			v := eval(strings.TrimPrefix(tl, "#if "))
			if v.Kind() == constant.Bool {
				taken = append(taken, constant.BoolVal(v))
			} else {
				taken = append(taken, constant.Sign(v) != 0)
			}
		case strings.HasPrefix(tl, "#ifndef"), strings.HasPrefix(tl, "#ifdef"):
			taken = append(taken, true)
		case tl == "#else":
			taken[len(taken)-1] = !taken[len(taken)-1]
		case tl == "#endif":
			taken = taken[:len(taken)-1]
		case !on():
		case tgmDefine.MatchString(tl):
			m := tgmDefine.FindStringSubmatch(tl)
			if _, ok := macros[m[1]]; !ok {
				defs[m[1]] = m[2]
			}
		case tgmDecl.MatchString(l):
			m := tgmDecl.FindStringSubmatch(l)
			sz := map[string]int{"float": 4, "mltop_t": elem, "T": elem}[m[1]]
			if sz == 0 {
				t.Fatalf("threadgroup array %s of unknown type %s", m[2], m[1])
			}
			n := 1
			for _, dim := range tgmDim.FindAllStringSubmatch(m[3], -1) {
				d, ok := constant.Int64Val(constant.ToInt(eval(dim[1])))
				if !ok {
					t.Fatalf("threadgroup array %s: dimension %q is not an integer", m[2], dim[1])
				}
				n *= int(d)
			}
			out[m[2]] = n * sz
		}
	}
	return out
}
