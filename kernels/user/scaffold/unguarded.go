package scaffold

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// guardWords are the tokens any of which, in a kernel's body, count as a
// bound check: a comparison (`if (i < n)`, `for (…; i < n; …)`, `if (gid
// >= n) return`), or a clamp of the index. Conservative: a body with any of
// them is taken as guarded, whatever it compares.
var guardWords = map[string]bool{"<": true, "<=": true, ">": true, ">=": true, "min": true, "max": true, "clamp": true, "fmin": true, "fmax": true, "umin": true, "umax": true}

// unguarded says whether a kernel's body has no bound check at all
// (Apple's add_arrays: `result[index] = inA[index] + inB[index];`): every
// thread of the grid reads and writes its element.
func unguarded(body []csrc.Token) bool {
	if len(body) == 0 {
		return false
	}
	for _, t := range body {
		if guardWords[t.Text] || strings.ContainsAny(t.Text, "<>") {
			return false
		}
	}
	return true
}

// cdivGrid matches a one-dimensional grid of the ceiling division the
// scaffold writes: cdiv(N * C, WG).
var cdivGrid = regexp.MustCompile(`^cdiv\((.+), ([^,()]+)\)$`)

// ruleForUnguarded adds, for a kernel without a bound check, the rule that
// its grid covers the elements exactly (`N % WG == 0`) when the grid is a
// ceiling division, and says so on the grid line; otherwise a TODO there.
func ruleForUnguarded(p *plan, k *kernelScan, d *dispatch) {
	if !unguarded(k.body) {
		return
	}
	m := cdivGrid.FindStringSubmatch(d.grid[0])
	if m == nil || d.grid[1] != "1" || d.grid[2] != "1" {
		d.gridComment = withTODO(d.gridComment, p.todo(fmt.Sprintf("%s has no bound check: the grid × threads must be exactly the elements it covers", k.sig.Entry),
			"%s compares its thread index with no size (no bound check): its grid × threads must cover the elements exactly; add a rule that says so", k.sig.Entry))
		return
	}
	size, per := m[1], m[2]
	if strings.ContainsAny(size, "+-") {
		size = "(" + size + ")"
	}
	rule := fmt.Sprintf("%s %% %s == 0", size, per)
	for _, r := range p.rules {
		if r.body == rule {
			return
		}
	}
	p.rules = append(p.rules, part{body: rule, comment: fmt.Sprintf("%s has no bound check (no comparison of its thread index): the grid must cover %s exactly", k.sig.Entry, m[1])})
}
