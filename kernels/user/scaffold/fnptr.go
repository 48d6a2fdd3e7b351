package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file follows a launch through a local function-pointer variable
// (exllamav2's rms_norm: `fp_rms_norm_kernel kernel =
// pick_rms_norm_kernel(blocks_per_warp); kernel<<<grid, block>>>(…)`,
// the picker returning `rms_norm_kernel<1>` … `rms_norm_kernel<16>`
// through a macro): the launch is the entry's, and the instantiations the
// variable may hold are its template arguments.

// pointerLaunch is a launch of entry through a local variable.
type pointerLaunch struct {
	name        string // the variable launched (`kernel`)
	at          int    // offset of the variable at the launch
	config      [2]int // the span of the launch's <<<…>>> contents
	end         int    // offset after the >>>
	line        int
	bound       string // what the variable is set to, as written (`pick_k(bpw)`)
	picker      string // the function returning the instantiations; "" when the variable is set to them
	pickerLine  int
	insts       []launchSeen // the instantiations it may hold, each with the line it is written on
	noTemplates bool         // the variable is set to entry itself, without template arguments
}

var nameLaunch = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*<<<([^;]*?)>>>`)

// pointerLaunches are the launches of entry through a local variable the
// launching function sets (its last `name = …;` before the launch): to
// entry's instantiations themselves (`auto k = vec ? kern<4> : kern<1>;`,
// `&kern<4>`), or to a call of a function of the source that returns them
// (`pick(n)`, whose body says `return kern<1>;` … directly or through a
// macro it uses: one instantiation per use).
func pointerLaunches(src, entry string) []pointerLaunch {
	var out []pointerLaunch
	var toks []csrc.Token
	for _, m := range nameLaunch.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		lineStart := strings.LastIndex(src[:m[0]], "\n") + 1
		if name == entry || strings.HasPrefix(strings.TrimSpace(src[lineStart:m[0]]), "//") ||
			m[2] > 0 && (src[m[2]-1] == '.' || src[m[2]-1] == '>' || src[m[2]-1] == ':') {
			continue
		}
		if toks == nil {
			toks = csrc.Tokenize(src)
		}
		pl := pointerLaunch{name: name, at: m[2], config: [2]int{m[4], m[5]}, end: m[1], line: strings.Count(src[:m[0]], "\n") + 1}
		from := functionStart(src, toks, name, pl.line)
		scope := src[from:m[0]]
		pl.bound = assignedExpr(scope, name)
		if pl.bound == "" {
			continue
		}
		boundAt := from + strings.LastIndex(scope, pl.bound)
		if strings.Trim(pl.bound, "& \t") == entry {
			pl.noTemplates = true
			out = append(out, pl)
			continue
		}
		pl.insts = instantiationsIn(src, entry, boundAt, boundAt+len(pl.bound))
		if len(pl.insts) == 0 {
			if callee := calledFunction.FindStringSubmatch(pl.bound); callee != nil {
				if head, open, close := functionBody(src, callee[1], boundAt); open > 0 {
					pl.picker, pl.pickerLine = callee[1], lineOf(src, head)
					pl.insts = instantiationsIn(src, entry, open, close)
				}
			}
		}
		if len(pl.insts) > 0 {
			out = append(out, pl)
		}
	}
	return out
}

// calledFunction matches a call as a variable's whole initializer: the
// function's name (`pick_k(bpw)`, `ns::pick(n)`).
var calledFunction = regexp.MustCompile(`^&?\s*((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*)\s*(?:<[^;()]*>\s*)?\(.*\)$`)

// functionBody is the span of the body of the function of that name the
// source defines (`fp pick(const int n) {…}`: the offsets of its name and
// braces), other than at skip (the call); 0s when the source defines none.
func functionBody(src, name string, skip int) (head, open, close int) {
	short := name[strings.LastIndex(name, ":")+1:]
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(short) + `\s*\([^;{}]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{`)
	for _, m := range re.FindAllStringIndex(src, -1) {
		if m[0] <= skip && skip < m[1] {
			continue
		}
		open = m[1] - 1
		depth := 0
		for i := open; i < len(src); i++ {
			switch src[i] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					return m[0], open, i
				}
			}
		}
	}
	return 0, 0, 0
}

// instantiationsIn are entry's instantiations written in src[from:to]
// (`kern<4>`, its template arguments), and those of the uses there of a
// function-like macro whose body writes one (`#define inst(b) if (n ==
// b) return kern<b>`: one per use, its parameter replaced), each with its
// line.
func instantiationsIn(src, entry string, from, to int) []launchSeen {
	var out []launchSeen
	seen := map[string]bool{}
	add := func(l launchSeen) {
		if key := strings.Join(l.args, ", "); !seen[key] {
			seen[key] = true
			out = append(out, l)
		}
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(entry) + `\s*<`)
	for _, m := range re.FindAllStringIndex(src, -1) {
		end := closingAngle(src, m[1]-1)
		if end < 0 {
			continue
		}
		l := launchSeen{args: splitArgs(strings.Join(strings.Fields(unsplice(src[m[1]:end])), " ")), line: strings.Count(src[:m[0]], "\n") + 1, blockArg: -1}
		if m[0] >= from && m[0] < to {
			add(l)
			continue
		}
		if name, _, _, _ := defineAround(src, m[0]); name == "" {
			continue
		}
		for _, u := range macroUses(src, m[0], l) {
			if at := lineOffset(src, u.line); u.line != l.line && at >= lineOffset(src, lineOf(src, from)) && at < to {
				add(u)
			}
		}
	}
	return out
}

// addPointerLaunches adds to lt the instantiations the source's launches of
// entry through a local variable may run (pointerLaunches), each with that
// launch's thread count; lt.via is the first such launch.
func (lt *launchTemplate) addPointerLaunches(src, entry string, seen map[string]bool) {
	for _, pl := range pointerLaunches(src, entry) {
		block := ""
		if config := splitArgs(unsplice(src[pl.config[0]:pl.config[1]])); len(config) >= 2 {
			block = strings.Join(strings.Fields(config[1]), " ")
		}
		added := false
		for _, l := range pl.insts {
			key := strings.Join(l.args, ", ")
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			l.block = block
			if identifier.MatchString(block) {
				l.blockArg = slices.Index(l.args, block)
			}
			lt.all = append(lt.all, l)
			added = true
			if lt.args == nil {
				lt.args, lt.line = l.args, l.line
				continue
			}
			lt.others = append(lt.others, launchAt{args: key, line: l.line})
		}
		if added && lt.via == nil {
			lt.via = &pl
		}
	}
}

// describe says how the launch reaches the entry: "the launch at line
// 227 runs kernel = pick(n), which pick (line 180) picks at run time".
func (pl pointerLaunch) describe(p *plan) string {
	s := fmt.Sprintf("the launch at %s runs %s = %s", p.lines.at(pl.line), pl.name, strings.Join(strings.Fields(pl.bound), " "))
	if pl.picker != "" {
		s += fmt.Sprintf(", which %s (%s) picks at run time", pl.picker, p.lines.at(pl.pickerLine))
	}
	return s
}

func lineOf(src string, off int) int { return strings.Count(src[:off], "\n") + 1 }

// instLines are the lines of the instantiations lt's launch through a
// variable may run: "line 182" or "lines 182 to 197".
func (lt *launchTemplate) instLines(p *plan) string {
	first, last := lt.all[0].line, lt.all[len(lt.all)-1].line
	if first == last {
		return p.lines.at(first)
	}
	return fmt.Sprintf("%s to %s", strings.Replace(p.lines.at(first), "line ", "lines ", 1), strings.TrimPrefix(p.lines.at(last), "line "))
}
