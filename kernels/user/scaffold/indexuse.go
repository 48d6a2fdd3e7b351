package scaffold

import (
	"github.com/mltop/mltop/kernels/user/csrc"
)

// intDataInit is the generator of an integer input that the kernel does
// not use as indices: small values, so that sums and products of them
// stay in range (a scan of 16 M ints below 1024 would overflow int32).
const intDataInit = "randint(0, 16)"

// usedAsIndex says whether the body uses the elements of buffer name as
// indices: inside the subscript of another array (`hist[bins[i]]`,
// `x[col[j]]`), or through a local it assigns them to, directly or
// through other locals (`int s = row_ptr[r]; … for (int j = s; …) v[j]`),
// in such a subscript or in pointer arithmetic on a pointer parameter
// (`wte + ix * C`). A scan's data read into a local that is summed and
// written back (cuda-samples shfl_scan) is not. A pointer passed on
// (to a helper, or offset) counts as used as indices: mltop cannot follow
// it.
func usedAsIndex(body []csrc.Token, name string, sig csrc.Signature) bool {
	pointers := map[string]bool{}
	for _, p := range sig.Params {
		if p.Pointer && p.Name != name {
			pointers[p.Name] = true
		}
	}
	for j, t := range body {
		if t.Kind == csrc.Ident && t.Text == name && tokText(body, j+1) != "[" && !(j > 0 && (body[j-1].Text == "." || body[j-1].Text == ">")) {
			return true // the pointer is passed on or offset: its use is not followed, keep it an index
		}
	}
	tainted := map[string]bool{}
	// holds says whether body[from:to] reads an element of name or a tainted local
	holds := func(from, to int) bool {
		for j := from; j < to && j < len(body); j++ {
			t := body[j]
			if t.Kind != csrc.Ident || j > 0 && (body[j-1].Text == "." || body[j-1].Text == ">") {
				continue
			}
			if t.Text == name && tokText(body, j+1) == "[" || tainted[t.Text] {
				return true
			}
		}
		return false
	}
	// taint the locals assigned from name's elements, to a fixpoint
	for changed := true; changed; {
		changed = false
		for i := 1; i+1 < len(body); i++ {
			lhs := body[i-1]
			if body[i].Text != "=" || body[i+1].Text == "=" || lhs.Kind != csrc.Ident || tainted[lhs.Text] || lhs.Text == name {
				continue
			}
			if holds(i+1, endOfStatement(body, i+1)) {
				tainted[lhs.Text] = true
				changed = true
			}
		}
	}
	for i := 1; i < len(body); i++ {
		prev := body[i-1]
		switch {
		case body[i].Text == "[" && prev.Kind == csrc.Ident && prev.Text != name:
			if holds(i+1, csrc.Matching(body, i)) {
				return true
			}
		case body[i].Text == "+" && prev.Kind == csrc.Ident && pointers[prev.Text] && tokText(body, i+1) != "=" && tokText(body, i+1) != "+":
			if holds(i+1, endOfStatement(body, i+1)) {
				return true
			}
		}
	}
	return false
}
