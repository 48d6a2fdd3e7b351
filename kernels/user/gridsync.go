package user

import (
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// GridSync is a grid-wide barrier a kernel waits on: a call that is
// defined only when every block of the grid is resident at once, that is
// under a cooperative launch (`cooperative: true`).
type GridSync struct {
	Line int    // 1-based, in the source scanned
	Func string // the function that calls it (the entry or a helper it calls)
	Call string // as written, e.g. "gg.sync()", "cg::sync(grid)", "this_grid().sync()"
}

// GridSyncs finds the grid-wide barriers of entry (a C++ name as the
// manifest writes it: kern, ns::kern, kern<T, 4>) in code: in its body
// and in the functions it calls, directly or through others. It knows
// `this_grid().sync()`, `X.sync()` and `sync(X)` where X is a
// cooperative_groups grid_group (declared as one, or `auto X =
// this_grid()`).
func GridSyncs(code, entry string) []GridSync {
	type body struct {
		toks []csrc.Token
		fn   string
	}
	bodies := map[string][]body{}
	for _, d := range csrc.Scan(code).Decls {
		if d.Kind != csrc.Function || !d.Definition || d.End > len(code) {
			continue
		}
		toks := csrc.Tokenize(code[d.Start:d.End])
		shift := strings.Count(code[:d.Start], "\n")
		for i := range toks {
			toks[i].Line += shift
		}
		for _, n := range d.Names {
			bodies[n] = append(bodies[n], body{toks: toks, fn: n})
		}
	}
	var out []GridSync
	start := csrc.EntryFunction(entry)
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, b := range bodies[fn] {
			out = append(out, gridSyncsIn(b.toks, b.fn)...)
			for _, t := range b.toks {
				if t.Kind == csrc.Ident && !seen[t.Text] && bodies[t.Text] != nil {
					seen[t.Text] = true
					queue = append(queue, t.Text)
				}
			}
		}
	}
	return out
}

// gridSyncsIn finds the grid barriers in one function's tokens.
func gridSyncsIn(toks []csrc.Token, fn string) []GridSync {
	text := func(i int) string {
		if i >= 0 && i < len(toks) {
			return toks[i].Text
		}
		return ""
	}
	grids := gridGroupVars(toks)
	var out []GridSync
	for i, t := range toks {
		switch {
		// this_grid().sync()
		case t.Text == "this_grid" && text(i+1) == "(" && text(i+2) == ")" && text(i+3) == "." && text(i+4) == "sync" && text(i+5) == "(":
			out = append(out, GridSync{Line: t.Line, Func: fn, Call: "this_grid().sync()"})
		// g.sync() / g->sync() on a grid_group
		case grids[t.Text] && (text(i+1) == "." || text(i+1) == "->") && text(i+2) == "sync" && text(i+3) == "(" && text(i-1) != "." && text(i-1) != "->":
			out = append(out, GridSync{Line: t.Line, Func: fn, Call: t.Text + text(i+1) + "sync()"})
		// cg::sync(g) / sync(this_grid())
		case t.Text == "sync" && text(i+1) == "(" && text(i-1) != "." && text(i-1) != "->" && (grids[text(i+2)] && text(i+3) == ")" || text(i+2) == "this_grid"):
			call := "sync(" + text(i+2) + ")"
			if text(i+2) == "this_grid" {
				call = "sync(this_grid())"
			}
			if text(i-1) == "::" {
				call = text(i-2) + "::" + call
			}
			out = append(out, GridSync{Line: t.Line, Func: fn, Call: call})
		}
	}
	return out
}

// gridGroupVars are the names declared as grid groups in a function:
// `grid_group g`, `cg::grid_group& g` (a parameter too) and
// `auto g = cg::this_grid();`.
func gridGroupVars(toks []csrc.Token) map[string]bool {
	vars := map[string]bool{}
	for i, t := range toks {
		switch t.Text {
		case "grid_group":
			j := i + 1
			for j < len(toks) && (toks[j].Text == "&" || toks[j].Text == "const" || toks[j].Text == "*") {
				j++
			}
			if j < len(toks) && toks[j].Kind == csrc.Ident {
				vars[toks[j].Text] = true
			}
		case "auto":
			j := i + 1
			for j < len(toks) && (toks[j].Text == "&" || toks[j].Text == "const") {
				j++
			}
			if j+1 >= len(toks) || toks[j].Kind != csrc.Ident || toks[j+1].Text != "=" {
				continue
			}
			for k := j + 2; k < len(toks) && toks[k].Text != ";"; k++ {
				if toks[k].Text == "this_grid" {
					vars[toks[j].Text] = true
					break
				}
			}
		}
	}
	return vars
}
