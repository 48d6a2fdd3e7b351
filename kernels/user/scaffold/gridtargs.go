package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// targKnob is a knob a launch's literal or constant template argument
// became (`vec_add<float, 4><<<…>>>`: VEC of the one value 4).
type targKnob struct {
	knob     string
	value    int
	constant string // the source's constant the launch passes, "" for a literal
	// swept: the launches pass several values (launchTemplate.values), so a
	// literal of the grid is none of them in particular
	swept bool
}

// gridTemplateLiterals writes a knob's name where the launch's grid has
// the literal the launch passes as that knob's template argument
// (`vec_add<float, 4><<<(n/4 + threads - 1)/threads, threads>>>`: the
// grid's 4 is VEC's), saying so in the grid's comment. When the literal
// may be something else too (1, another knob's value, the block size),
// the literal stays and a TODO says what the grid assumes.
func gridTemplateLiterals(p *plan, k *kernelScan, d *dispatch) {
	for _, tk := range k.targKnobs {
		if tk.swept {
			continue
		}
		lit := strconv.Itoa(tk.value)
		if tk.constant != "" { // hostNames wrote the knob for the constant
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(tk.constant) + `\b`).MatchString(k.launch.grid + " " + k.launch.gridDim3) {
				d.gridComment += fmt.Sprintf("; its %s is %s, the launch's template argument", tk.constant, tk.knob)
			}
			continue
		}
		if !gridHas(d.grid, lit) {
			continue
		}
		if why := ambiguousLiteral(k, d, tk); why != "" {
			d.gridComment = withTODO(d.gridComment, p.todo(fmt.Sprintf("the grid assumes %s=%d (its %d may be %s's template argument, or %s): write %s where it is", tk.knob, tk.value, tk.value, tk.knob, why, tk.knob),
				"%s: the grid of the launch at %s has %d, the launch's template argument for knob %s, which may also be %s: the grid assumes %s=%d; write %s where the %d stands for it", k.sig.Entry, p.lines.at(k.launch.line), tk.value, tk.knob, why, tk.knob, tk.value, tk.knob, tk.value))
			continue
		}
		for i, g := range d.grid {
			d.grid[i] = replaceNumber(g, lit, tk.knob)
		}
		d.gridComment += fmt.Sprintf("; its %d is %s, the launch's template argument", tk.value, tk.knob)
	}
}

// gridHas says whether a grid has lit as a number of its own.
func gridHas(grid []string, lit string) bool {
	for _, g := range grid {
		if replaceNumber(g, lit, "") != g {
			return true
		}
	}
	return false
}

// ambiguousLiteral says what else a grid's literal of tk's value may be:
// "" when it can only be tk's template argument.
func ambiguousLiteral(k *kernelScan, d *dispatch, tk targKnob) string {
	if tk.value <= 1 {
		return "a count of its own"
	}
	for _, o := range k.targKnobs {
		if o.knob != tk.knob && o.value == tk.value {
			return fmt.Sprintf("%s's, of the same value", o.knob)
		}
	}
	if lb := k.launch; lb != nil && lb.value == tk.value && k.block != tk.knob {
		return "the block size"
	}
	for _, t := range d.threads {
		if t == strconv.Itoa(tk.value) {
			return "the block size"
		}
	}
	return ""
}

// replaceNumber replaces the integer literal lit where it stands on its
// own in e: not inside a name or a number like 0.5, 4.0f or 44.
func replaceNumber(e, lit, with string) string {
	word := func(i int) bool {
		return i >= 0 && i < len(e) && (e[i] == '_' || e[i] == '.' || e[i] >= '0' && e[i] <= '9' || e[i] >= 'a' && e[i] <= 'z' || e[i] >= 'A' && e[i] <= 'Z')
	}
	var b strings.Builder
	for i := 0; i < len(e); {
		if strings.HasPrefix(e[i:], lit) && !word(i-1) && !word(i+len(lit)) {
			b.WriteString(with)
			i += len(lit)
			continue
		}
		b.WriteByte(e[i])
		i++
	}
	return b.String()
}
