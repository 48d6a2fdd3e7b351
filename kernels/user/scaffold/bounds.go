package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// blockFromBounds makes the kernel's thread count what its
// __launch_bounds__ says: a literal is a knob of that one value; a
// #define or constant of the source its knob (constantBlock); a template
// parameter the knob entryExpr made of it. False when it has none, or one
// mltop cannot read (blockFromSource's TODO then says what it saw).
func (c *context) blockFromBounds(p *plan, k *kernelScan) bool {
	arg, line := k.bounds, k.boundsLine
	if v, err := strconv.Atoi(arg); err == nil && v > 0 {
		n, isNew := p.claim("WG", "knob")
		k.block = n
		if isNew {
			p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: [%d], default: %d, doc: threads per group}", v, v),
				comment: fmt.Sprintf("from __launch_bounds__(%d) at %s, the most threads it is compiled for; list smaller values to sweep if the kernel allows them", v, p.lines.at(line))})
		}
		return true
	}
	if !identifier.MatchString(arg) {
		return false
	}
	for _, tp := range k.tmpl {
		if n := safeName(tp.name, c.dtypeName); tp.name == arg && !tp.isType && p.taken[n] == "knob" {
			k.block = n
			return true
		}
	}
	if cn, ok := constantNamed(c.src, arg); ok {
		c.constantBlock(p, k, cn)
		return true
	}
	return false
}

// capBlockKnob keeps the values of a thread-count knob that
// __launch_bounds__(N) allows (at most N), when the knob is the sweep
// mltop wrote (from a block-size parameter or template parameter).
func capBlockKnob(p *plan, k *kernelScan) {
	limit, err := strconv.Atoi(k.bounds)
	if err != nil || limit <= 0 || k.block == "" {
		return
	}
	for i := range p.knobs {
		kn := &p.knobs[i]
		if kn.name != k.block || !strings.Contains(kn.body, sweep) {
			continue
		}
		var keep []int
		for _, v := range []int{32, 64, 128, 256, 512, 1024} {
			if v <= limit {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			keep = []int{limit}
		}
		def := keep[len(keep)-1]
		if m := knobDefault.FindStringSubmatch(kn.body); m != nil {
			if d, _ := strconv.Atoi(m[1]); d <= limit {
				def = d
			}
		}
		kn.body = fmt.Sprintf("{values: %s, default: %d, doc: threads per group}", intList(keep), def)
		kn.comment += fmt.Sprintf("; at most %d: its __launch_bounds__ at %s", limit, p.lines.at(k.boundsLine))
	}
}

var knobDefault = regexp.MustCompile(`default: (\d+)`)
