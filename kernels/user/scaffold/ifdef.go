package scaffold

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// typedefChoice is the type an #if picks for a typedef'd name, read the
// way the preprocessor reads the source (its local headers pasted in).
type typedefChoice struct {
	ctype  string   // the type picked
	tested []string // the macros the #if conditions test
	fixed  []string // those the source itself #defines (the choice is fixed)
	// others are the types the branches not taken alias the name to, each
	// with the macros tested up to its branch (`#ifdef USE_DP typedef
	// double real;`: double, USE_DP).
	others []typedefBranch
}

// typedefBranch is a type an #if branch not taken picks.
type typedefBranch struct {
	ctype  string
	tested []string
}

var (
	directiveRE = regexp.MustCompile(`^\s*#\s*(\w+)\s*(.*)$`)
	definedRE   = regexp.MustCompile(`defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)`)
	macroNameRE = regexp.MustCompile(`^\w+`) // what #define / #undef name
)

// chooseTypedef follows the #if/#ifdef/#elif/#else groups of src with the
// macros it #defines, and returns the type name is aliased to in the
// branch that is live. A condition beyond this small reader (anything but
// defined(), !, &&, ||, parentheses and integers) makes its group unknown:
// its #defines are not followed, and ok is false if the typedef is in it.
// ok is also false when no live branch declares name.
func chooseTypedef(src, name string) (typedefChoice, bool) {
	decl := regexp.MustCompile(`^\s*(?:typedef\s+(.+?)\s+` + name + `\s*;|using\s+` + name + `\s*=\s*(.+?)\s*;)`)
	defined := map[string]bool{}
	var ch typedefChoice
	type frame struct{ live, taken, parent, unknown bool }
	var stack []frame
	live, unknown := true, 0
	for _, l := range strings.Split(strings.ReplaceAll(src, "\\\n", " "), "\n") {
		m := directiveRE.FindStringSubmatch(l)
		if m == nil {
			d := decl.FindStringSubmatch(l)
			switch {
			case live && d != nil && ch.ctype == "":
				if unknown > 0 {
					return ch, false
				}
				ch.ctype = strings.Join(strings.Fields(d[1]+d[2]), " ")
			case !live && d != nil && unknown == 0:
				ch.others = append(ch.others, typedefBranch{ctype: strings.Join(strings.Fields(d[1]+d[2]), " "), tested: slices.Clone(ch.tested)})
			}
			continue
		}
		kind, rest := m[1], strings.TrimSpace(stripComment(m[2]))
		if (kind == "elif" || kind == "else" || kind == "endif") && len(stack) == 0 {
			return ch, false
		}
		switch kind {
		case "define", "undef":
			if n := macroNameRE.FindString(rest); live && unknown == 0 && n != "" {
				defined[n] = kind == "define"
			}
		case "if", "ifdef", "ifndef":
			cond := rest
			if kind == "ifdef" {
				cond = "defined(" + rest + ")"
			} else if kind == "ifndef" {
				cond = "!defined(" + rest + ")"
			}
			v, ok := ch.eval(cond, defined)
			f := frame{parent: live, live: live && v, unknown: !ok}
			if !ok {
				f.live = live
				unknown++
			}
			f.taken = f.live
			stack = append(stack, f)
			live = f.live
		case "elif", "else":
			f := &stack[len(stack)-1]
			v, ok := true, true
			if kind == "elif" {
				v, ok = ch.eval(rest, defined)
			}
			if f.unknown {
				continue // the group stays unknown; live stays its parent's
			}
			if !ok {
				f.unknown, f.live = true, f.parent
				unknown++
				live = f.live
				continue
			}
			f.live = f.parent && !f.taken && v
			f.taken = f.taken || f.live
			live = f.live
		case "endif":
			f := stack[len(stack)-1]
			if f.unknown {
				unknown--
			}
			live = f.parent
			stack = stack[:len(stack)-1]
		}
	}
	return ch, ch.ctype != ""
}

func stripComment(s string) string {
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "/*"); i >= 0 {
		s = s[:i]
	}
	return s
}

// eval evaluates an #if condition made of defined(X), !, &&, ||,
// parentheses and integers, recording the macros it tests.
func (ch *typedefChoice) eval(cond string, defined map[string]bool) (bool, bool) {
	expr := definedRE.ReplaceAllStringFunc(cond, func(s string) string {
		sm := definedRE.FindStringSubmatch(s)
		n := sm[1] + sm[2]
		if !slices.Contains(ch.tested, n) {
			ch.tested = append(ch.tested, n)
			if defined[n] {
				ch.fixed = append(ch.fixed, n)
			}
		}
		if defined[n] {
			return " 1 "
		}
		return " 0 "
	})
	p := &condParser{toks: strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ", "!", " ! ", "&&", " && ", "||", " || ").Replace(expr))}
	v, ok := p.or()
	return v, ok && p.i == len(p.toks)
}

// condParser reads `a || b`, `a && b`, `!a`, `(a)` and integers.
type condParser struct {
	toks []string
	i    int
}

func (p *condParser) or() (bool, bool) {
	v, ok := p.and()
	for ok && p.i < len(p.toks) && p.toks[p.i] == "||" {
		p.i++
		w, ok2 := p.and()
		v, ok = v || w, ok2
	}
	return v, ok
}

func (p *condParser) and() (bool, bool) {
	v, ok := p.unary()
	for ok && p.i < len(p.toks) && p.toks[p.i] == "&&" {
		p.i++
		w, ok2 := p.unary()
		v, ok = v && w, ok2
	}
	return v, ok
}

func (p *condParser) unary() (bool, bool) {
	if p.i >= len(p.toks) {
		return false, false
	}
	t := p.toks[p.i]
	p.i++
	switch t {
	case "!":
		v, ok := p.unary()
		return !v, ok
	case "(":
		v, ok := p.or()
		if !ok || p.i >= len(p.toks) || p.toks[p.i] != ")" {
			return false, false
		}
		p.i++
		return v, true
	}
	n, err := strconv.Atoi(t)
	return n != 0, err == nil
}
