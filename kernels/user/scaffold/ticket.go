package scaffold

import (
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// A ticket counter is the integer a "last block" reduction counts finished
// blocks in: each block takes a ticket (`t = atomicAdd(count, 1)` or
// `atomicInc(&count, gridDim.x)`), and the block whose ticket is the last
// one (`t == gridDim.x - 1`) finishes the reduction and resets the count.
// The counter must be 0 before every launch and its final value means
// nothing: a scratch buffer, not an output.

// ticketAtomics are the atomics a block takes its ticket with.
var ticketAtomics = map[string]bool{"atomicAdd": true, "atomicInc": true, "atomicSub": true, "atomicCAS": true, "atomicExch": true}

// ticketCounter says whether body takes tickets from name: an atomic on it
// whose result decides, against gridDim, which block is the last.
func ticketCounter(body []csrc.Token, name string) bool {
	for i := 0; i+1 < len(body); i++ {
		if !ticketAtomics[body[i].Text] || body[i+1].Text != "(" || !atomicTarget(firstArg(body, i+1), name) {
			continue
		}
		end := csrc.Matching(body, i+1)
		from, to := statementAround(body, i)
		// the statement less the atomic's own arguments (atomicInc's limit
		// is gridDim.x too)
		if mentions(body[from:i], "gridDim") || mentions(body[end:to], "gridDim") {
			return true
		}
		if tokText(body, i-1) == "=" && i >= 2 && body[i-2].Kind == csrc.Ident && ticketDecides(body[to:], body[i-2].Text) {
			return true
		}
	}
	return false
}

// atomicTarget says whether an atomic's first argument is name's storage:
// name, &name, &name[k], name + k.
func atomicTarget(arg []csrc.Token, name string) bool {
	for len(arg) > 0 && (arg[0].Text == "&" || arg[0].Text == "(") {
		arg = arg[1:]
	}
	if len(arg) == 0 || arg[0].Text != name || arg[0].Kind != csrc.Ident {
		return false
	}
	next := tokText(arg, 1)
	return next == "" || next == "[" || next == "+" || next == ")"
}

// ticketDecides says whether a statement of rest compares the ticket
// variable with gridDim.
func ticketDecides(rest []csrc.Token, ticket string) bool {
	for i, t := range rest {
		if t.Kind == csrc.Ident && t.Text == ticket && tokText(rest, i-1) != "." {
			from, to := statementAround(rest, i)
			if mentions(rest[from:to], "gridDim") {
				return true
			}
		}
	}
	return false
}

// statementAround is the span [from, to) of the statement (or the
// condition of an if) around toks[i]: from the last ; { } before it to the
// next one after it outside parentheses.
func statementAround(toks []csrc.Token, i int) (from, to int) {
	from = i
	for from > 0 && !strings.Contains(";{}", toks[from-1].Text) {
		from--
	}
	depth := 0
	for to = i; to < len(toks); to++ {
		switch toks[to].Text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
		case ";", "{", "}":
			if depth <= 0 {
				return from, to
			}
		}
	}
	return from, to
}

// deviceTicketCounter says whether a device function of the source takes
// tickets from the global name.
func deviceTicketCounter(src string, scan *csrc.File, name string) bool {
	for _, d := range scan.Decls {
		if d.Kind == csrc.Function && d.Device && d.Definition && ticketCounter(csrc.Tokenize(src[d.Start:d.End]), name) {
			return true
		}
	}
	return false
}
