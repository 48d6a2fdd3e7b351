package csrc

import "slices"

// This file follows the preprocessor's conditionals well enough for Scan:
// code under `#if 0` (and after the #else of an `#if 1`) is dead, and so
// is code under a condition on the compiler's own macros that NVRTC makes
// false (`#ifndef __CUDACC__`, the #else of `#if defined(__CUDA_ARCH__)`:
// nvrtcMacros); of the other branches, all are read when each keeps its
// braces balanced, or when each opens the same number of namespace (or
// extern "C") blocks that the code after the group closes (`#ifdef _WIN32
// namespace a { class Timer {…}; #else namespace a { class Timer {…};
// #endif … }`), else only the first (`#ifdef X void f() { #else void
// f(int) { #endif`).

func isOpen(kind string) bool { return kind == "if" || kind == "ifdef" || kind == "ifndef" }

func isBranch(kind string) bool {
	return kind == "elif" || kind == "else" || kind == "elifdef" || kind == "elifndef"
}

// condFrame is one #if group being read.
type condFrame struct {
	parentDead bool
	taken      bool // a branch whose condition is true was seen
	dead       bool // the current branch is dead
}

// Conds follows the #if groups of a source, directive by directive: the
// lines under `#if 0` / `#elif 0`, and the branches after one whose
// condition is the literal 1, are dead; every other branch is live.
// Metal's macro expansion reads sources with it (no compiler macros: a
// Metal source is not NVRTC's); Scan (markDead) adds nvrtcMacros, ScanIn
// the macros it is given.
type Conds struct {
	stack []condFrame
	// Known decides the conditions on the macros it names, defined (true)
	// or not (false), and Values gives some of them integer values, which
	// decide comparisons and arithmetic on them: Metal's reader takes the
	// macros of the compiler it reads for (`#if defined(__HAVE_BFLOAT__)`,
	// `#if __METAL_VERSION__ >= 310`). Both nil: every condition on a name
	// is unknown.
	Known  Macros
	Values map[string]int64
}

// Dead says whether the lines after the last directive taken are dead.
func (c *Conds) Dead() bool {
	if len(c.stack) == 0 {
		return false
	}
	f := c.stack[len(c.stack)-1]
	return f.parentDead || f.dead
}

// Directive takes one directive line, with or without its '#', and says
// whether the directive itself is in a dead region.
func (c *Conds) Directive(text string) (dead bool) {
	d := parseDirective(text)
	return c.step(d.Kind, condValueIn(d.Kind, d.cond, c.Known, c.Values))
}

// step takes a directive of kind whose condition has the value lit: +1
// true, -1 false, 0 unknown (condValue).
func (c *Conds) step(kind string, lit int8) (dead bool) {
	dead = c.Dead()
	switch {
	case isOpen(kind):
		c.stack = append(c.stack, condFrame{parentDead: dead, dead: lit < 0, taken: lit > 0})
	case isBranch(kind) && len(c.stack) > 0:
		f := &c.stack[len(c.stack)-1]
		f.dead = f.taken || lit < 0
		f.taken = f.taken || lit > 0
		dead = f.parentDead
	case kind == "endif" && len(c.stack) > 0:
		dead = c.stack[len(c.stack)-1].parentDead
		c.stack = c.stack[:len(c.stack)-1]
	}
	return dead
}

// markDead sets Directive.Dead and returns the live tokens: code outside
// dead regions, and the markers of live conditionals. known decides the
// conditions on the macros it names (condValue).
func markDead(toks []ltok, dirs []Directive, known map[string]bool) []ltok {
	var conds Conds
	var live []ltok
	for _, t := range toks {
		if t.dir < 0 {
			if !conds.Dead() {
				live = append(live, t)
			}
			continue
		}
		d := &dirs[t.dir]
		d.Dead = conds.step(d.Kind, condValue(d.Kind, d.cond, known))
		d.deadAfter = conds.Dead()
		if !d.Dead {
			known = forget(known, d)
		}
		if !d.Dead && (isOpen(d.Kind) || isBranch(d.Kind) || d.Kind == "endif") {
			live = append(live, t)
		}
	}
	return live
}

// pruner keeps, of each #if group, every branch when all of them keep
// their braces balanced, else the first live one (`#ifndef __CUDA_ARCH__
// void launch() { #else __global__ void k() { #endif`: k's); markers are
// dropped. A group whose live branches each leave the same number of
// namespace or extern "C" blocks open (and close none they did not open)
// keeps every branch too, each but the last followed by as many "}" as it
// left open: the scan reads each branch's declarations in their own
// namespace, and the code after the group in the last one's. Reading only
// the first would leave those of the others unscanned, so never blanked
// (a host-only class defined once per platform).
type pruner struct {
	toks []ltok
	dirs []Directive
}

func prune(live []ltok, dirs []Directive) []ltok {
	p := &pruner{toks: live, dirs: dirs}
	var out []ltok
	for i := 0; i < len(live); {
		kept, _, _, next := p.seq(i)
		out = append(out, kept...)
		i = next + 1 // a stray #else / #endif
	}
	return out
}

// seq reads from i up to an #elif/#else/#endif of this level (or the end):
// the kept tokens, their brace balance, whether it never went negative,
// and where it stopped.
func (p *pruner) seq(i int) (kept []ltok, bal int, ok bool, next int) {
	ok = true
	for i < len(p.toks) {
		t := p.toks[i]
		if t.dir >= 0 {
			kind := p.dirs[t.dir].Kind
			if !isOpen(kind) {
				return kept, bal, ok, i
			}
			g, gb, gok, n := p.group(i)
			kept = append(kept, g...)
			if bal += gb; bal < 0 || !gok {
				ok = false
			}
			i = n
			continue
		}
		switch t.text {
		case "{":
			bal++
		case "}":
			if bal--; bal < 0 {
				ok = false
			}
		}
		kept = append(kept, t)
		i++
	}
	return kept, bal, ok, i
}

// group reads the #if group at i, returning after its #endif.
func (p *pruner) group(i int) (kept []ltok, bal int, ok bool, next int) {
	var branches [][]ltok
	var bals []int
	var ends []ltok // the directive ending each branch (#elif, #else, #endif)
	allBalanced := true
	first := -1 // the first live branch
	var live []int
	for {
		dead := p.dirs[p.toks[i].dir].deadAfter
		i++
		k, b, o, n := p.seq(i)
		if first < 0 && !dead {
			first = len(branches)
		}
		if !dead {
			live = append(live, len(branches))
		}
		branches = append(branches, k)
		bals = append(bals, b)
		if n < len(p.toks) {
			ends = append(ends, p.toks[n])
		} else {
			ends = append(ends, ltok{})
		}
		allBalanced = allBalanced && (dead || o && b == 0)
		if n >= len(p.toks) {
			next = n
			break
		}
		i = n
		if p.dirs[p.toks[n].dir].Kind == "endif" {
			next = i + 1
			break
		}
	}
	if allBalanced {
		for _, b := range branches {
			kept = append(kept, b...)
		}
		return kept, 0, true, next
	}
	if first < 0 {
		return nil, 0, true, next
	}
	if open := openNamespaces(branches[first]); len(live) > 1 && open > 0 &&
		!slices.ContainsFunc(live, func(b int) bool { return openNamespaces(branches[b]) != open }) {
		for j, b := range live {
			kept = append(kept, branches[b]...)
			if j < len(live)-1 {
				end := ends[b]
				for range open {
					kept = append(kept, ltok{kind: Punct, text: "}", line: end.line, start: end.start, end: end.start, dir: -1})
				}
			}
		}
		return kept, open, true, next
	}
	return branches[first], bals[first], bals[first] >= 0, next
}

// openNamespaces is how many blocks toks leaves open when each of them is
// a namespace or extern "C" block and toks closes none it did not open;
// else -1.
func openNamespaces(toks []ltok) int {
	var stack []bool // per open brace: a namespace or linkage block
	for k, t := range toks {
		switch t.text {
		case "{":
			stack = append(stack, namespaceBrace(toks, k))
		case "}":
			if len(stack) == 0 {
				return -1
			}
			stack = stack[:len(stack)-1]
		}
	}
	if slices.Contains(stack, false) {
		return -1
	}
	return len(stack)
}

// namespaceBrace says whether the "{" at toks[k] opens a namespace
// (`namespace a {`, `namespace a::b {`, `inline namespace v1 {`, `namespace {`)
// or an extern "C" block.
func namespaceBrace(toks []ltok, k int) bool {
	if k >= 2 && toks[k-1].kind == Literal && toks[k-2].text == "extern" {
		return true
	}
	j := k - 1
	for j >= 0 && toks[j].text != "namespace" && (toks[j].kind == Ident || toks[j].text == "::") {
		j--
	}
	return j >= 0 && toks[j].text == "namespace"
}
