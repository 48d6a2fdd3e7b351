package scaffold

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// A kernel's integer parameter that its body uses as a shuffle's width or
// offset, or as a loop's stride, is no length: cuda-samples shfl_scan's
// `shfl_scan_test(int* data, int width, …)` takes width 32 for its
// __shfl_up_sync, and the buffers' length is what the launch's grid
// covers (`n_elements / blockSize`). sizeOf leaves such a dim out of the
// buffers' guessed shape, and a literal the launch passes for it is the
// arg.

// nonSizeUse says how the body uses parameter name other than as a
// length: "the width of __shfl_up_sync", "a loop's stride"; "" when it
// does not.
func nonSizeUse(body []csrc.Token, name string) string {
	for i, t := range body {
		if t.Kind != csrc.Ident || !strings.HasPrefix(t.Text, "__shfl") || tokText(body, i+1) != "(" {
			continue
		}
		first := 1 // __shfl_up(v, delta, width): after the value
		if strings.HasSuffix(t.Text, "_sync") {
			first = 2 // __shfl_up_sync(mask, v, delta, width)
		}
		for a, arg := range csrc.SplitAtCommas(body[i+2:max(i+2, csrc.Matching(body, i+1))], false) {
			if a >= first && len(arg) == 1 && arg[0].Text == name {
				if a == first+1 {
					return "the width of " + t.Text
				}
				return "the lane offset of " + t.Text
			}
		}
	}
	// for (…; …; i *= name) / i += name / i <<= name
	for i, t := range body {
		if t.Text != "for" || tokText(body, i+1) != "(" {
			continue
		}
		end := csrc.Matching(body, i+1)
		semis := 0
		for j := i + 2; j < end; j++ {
			if body[j].Text == ";" {
				semis++
				continue
			}
			if semis == 2 && body[j].Text == name && body[j].Kind == csrc.Ident && j >= 2 && body[j-1].Text == "=" && strings.Contains("*+<>", body[j-2].Text) {
				return "a loop's stride"
			}
		}
	}
	return ""
}

// notSizeArg is the arg of an integer parameter the body uses as no
// length, when its launch passes a literal for it (`shfl_scan_test<<<…>>>(d,
// 32, sums)`): that literal, with a note on the args line; "" otherwise.
func (c *context) notSizeArg(p *plan, k *kernelScan, pname string) string {
	why := nonSizeUse(k.body, pname)
	if why == "" {
		return ""
	}
	if k.notSize == nil {
		k.notSize = map[string]string{}
	}
	k.notSize[safeName(pname, c.dtypeName)] = why
	params := k.sig.Bindable()
	if k.launch == nil || len(k.launch.args) != len(params) {
		return ""
	}
	for i, prm := range params {
		if prm.Name == pname && intLiteral.MatchString(strings.TrimSpace(k.launch.args[i])) {
			v := strings.TrimSpace(k.launch.args[i])
			k.argsNotes = append(k.argsNotes, fmt.Sprintf("%s is %s (%s), as the launch at %s passes it", pname, v, why, p.lines.at(k.launch.line)))
			return v
		}
	}
	return ""
}

// gridLength is the dim of the length the launch's grid covers when the
// kernel takes none (`gridSize = n_elements / blockSize`): its one name
// that is no knob, dim, constant or built-in, claimed as a dim (its
// default the host's value, when it assigns one); "" when the grid has
// no such single name.
func (c *context) gridLength(p *plan, k *kernelScan) string {
	if k.launch == nil || k.launch.gridDim3 != "" || identifier.MatchString(strings.TrimSpace(k.launch.grid)) {
		return "" // a bare name is a count of groups (gridDim)
	}
	toks := csrc.Tokenize(k.launch.grid)
	name := ""
	for i, t := range toks {
		if t.Kind != csrc.Ident || tokText(toks, i+1) == "(" || tokText(toks, i-1) == "." || p.taken[t.Text] == "knob" || t.Text == k.launch.name {
			continue
		}
		if _, isConst := constantNamed(c.src, t.Text); isConst || user.CUDABuiltin(t.Text) || csrc.IsIntScalar(t.Text) {
			continue
		}
		if name != "" && name != t.Text {
			return ""
		}
		name = t.Text
	}
	if name == "" || p.taken[name] != "" && p.taken[name] != "dim" {
		return ""
	}
	n, isNew := p.claim(safeName(name, c.dtypeName), "dim")
	if isNew {
		v := 1048576
		if host := assignedInt(c.src[:lineOffset(c.src, k.launch.line)], name); host > 0 {
			v = host
		}
		comment := p.todo(fmt.Sprintf("the length the launch's grid covers (%s at %s): default and range", name, p.lines.at(k.launch.line)),
			"%s: the buffers' length is %s, which the launch's grid at %s covers (its integer parameters are no lengths): set its default and range", k.sig.Entry, n, p.lines.at(k.launch.line))
		p.dims = append(p.dims, part{name: n, body: "{default: " + strconv.Itoa(v) + ", min: 1}", comment: comment})
	}
	return n
}
