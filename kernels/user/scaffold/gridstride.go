package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// loopBound is a parameter a kernel's grid-stride loop runs its index up
// to (`for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i +=
// blockDim.x * gridDim.x)`, or a macro of one: mmcv's and Caffe's
// `CUDA_1D_KERNEL_LOOP(index, nthreads)`): the kernel's total work, a
// dim, whatever its name says (nthreads is no thread count there).
type loopBound struct {
	param string
	how   string // the loop as written, for the comment
	line  int
}

// gridStrideMacro matches the names projects give a grid-stride loop
// macro whose second argument is the bound, when the source mltop reads
// does not define it (it is in a header found through include_dirs).
var gridStrideMacro = regexp.MustCompile(`^\w*(KERNEL_LOOP|GRID_STRIDE_LOOP|GRID_LOOP)\w*$`)

// loopBounds are the parameters of k that bound a grid-stride loop of its
// body, by name.
func (c *context) loopBounds(k *kernelScan) map[string]loopBound {
	params := map[string]bool{}
	for _, p := range k.sig.Params {
		if !p.Pointer {
			params[p.Name] = true
		}
	}
	out := map[string]loopBound{}
	body := k.body
	for i := 0; i+1 < len(body); i++ {
		t := body[i]
		if t.Kind != csrc.Ident || body[i+1].Text != "(" {
			continue
		}
		close := csrc.Matching(body, i+1)
		if close <= i {
			continue
		}
		if t.Text == "for" {
			if b := forBound(body[i+2 : close]); params[b] {
				out[b] = loopBound{param: b, how: "for (" + writeTokens(body[i+2:close]) + ")", line: t.Line}
			}
			continue
		}
		at := c.gridStrideArg(t.Text)
		if at < 0 {
			continue
		}
		args := csrc.SplitAtCommas(body[i+2:close], false)
		if at < len(args) && len(args[at]) == 1 && params[args[at][0].Text] {
			b := args[at][0].Text
			out[b] = loopBound{param: b, how: t.Text + "(" + writeTokens(body[i+2:close]) + ")", line: t.Line}
		}
	}
	return out
}

// gridStrideArg is the argument of macro name that bounds its grid-stride
// loop: read from its #define in the source (`#define LOOP(i, n) for (…;
// i < (n); i += … gridDim.x)`), else the second of a macro named like one
// (gridStrideMacro); -1 when name is no such macro.
func (c *context) gridStrideArg(name string) int {
	re := regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+` + regexp.QuoteMeta(name) + `\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)`)
	m := re.FindStringSubmatch(c.src)
	if m == nil {
		if gridStrideMacro.MatchString(name) {
			return 1
		}
		return -1
	}
	params := strings.Split(m[1], ",")
	for i := range params {
		params[i] = strings.TrimSpace(params[i])
	}
	toks := csrc.Tokenize(strings.ReplaceAll(m[2], "\\\n", " "))
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].Text != "for" || toks[i+1].Text != "(" {
			continue
		}
		close := csrc.Matching(toks, i+1)
		if close <= i {
			return -1
		}
		b := forBound(toks[i+2 : close])
		for j, p := range params {
			if p == b {
				return j
			}
		}
	}
	return -1
}

// forBound is the name a for loop's head (what its parentheses hold)
// bounds a grid-stride index with: the condition `i < n` (or `i < (n)`)
// where the start reads blockIdx and the step gridDim; "" otherwise.
func forBound(head []csrc.Token) string {
	parts := [][]csrc.Token{}
	start := 0
	for i, t := range head {
		if t.Text == ";" {
			parts = append(parts, head[start:i])
			start = i + 1
		}
	}
	parts = append(parts, head[start:])
	if len(parts) != 3 || !hasText(parts[0], "blockIdx") || !hasText(parts[2], "gridDim") {
		return ""
	}
	cond := parts[1]
	var rest []csrc.Token
	for i, t := range cond {
		if t.Text == "<" && i > 0 {
			rest = cond[i+1:]
			break
		}
	}
	for len(rest) >= 2 && rest[0].Text == "(" && rest[len(rest)-1].Text == ")" {
		rest = rest[1 : len(rest)-1]
	}
	if len(rest) == 1 && rest[0].Kind == csrc.Ident {
		return rest[0].Text
	}
	return ""
}

func hasText(toks []csrc.Token, s string) bool {
	for _, t := range toks {
		if t.Text == s {
			return true
		}
	}
	return false
}

func writeTokens(toks []csrc.Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && (t.Kind == csrc.Ident || toks[i-1].Kind == csrc.Ident) && t.Text != "," && t.Text != ";" && t.Text != ")" && t.Text != "." && toks[i-1].Text != "(" && toks[i-1].Text != "." {
			b.WriteString(" ")
		} else if i > 0 && (toks[i-1].Text == "," || toks[i-1].Text == ";") {
			b.WriteString(" ")
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// boundDim makes a loop-bound parameter a dim: the kernel's work count.
func (c *context) boundDim(p *plan, k *kernelScan, lb loopBound) string {
	const work, plain = "{default: 1048576, min: 1}", "{default: 1024, min: 1}"
	n := c.dim(p, k, safeName(lb.param, c.dtypeName), 1)
	for i := range p.dims {
		d := &p.dims[i]
		if d.name == n && d.comment == "TODO: default and range" {
			d.comment = fmt.Sprintf("TODO: default and range; the work count: it bounds the grid-stride loop %s at %s", lb.how, p.lines.at(lb.line))
			if k.loopBound == "" {
				d.body = work
			}
		}
		// nested loops (Pointnet2's gather_points over b, then c) multiply
		// their bounds: none of them takes one loop's work count
		if k.loopBound != "" && k.loopBound != n && (d.name == k.loopBound || d.name == n) && d.body == work {
			d.body = plain
		}
	}
	k.loopBound = n
	return n
}

var gridCallRE = regexp.MustCompile(`^([A-Za-z_]\w*)\s*\((.*)\)$`)

// strideGrid is the grid of a grid-stride kernel whose launch computes it
// with a function of the source (mmcv's `GET_BLOCKS(output_size)`) given
// its work count: one thread per element of the loop's bound, capped
// where the function caps it (`min(optimal_block_num, 4096)`), and the
// grid's comment. nil when the launch's grid is no such call.
func (c *context) strideGrid(p *plan, k *kernelScan, names map[string]string, threads string) ([]string, string) {
	lb := k.launch
	if k.loopBound == "" || lb == nil || lb.gridDim3 != "" {
		return nil, ""
	}
	m := gridCallRE.FindStringSubmatch(strings.TrimSpace(lb.grid))
	if m == nil {
		return nil, ""
	}
	args := splitArgs(m[2])
	if len(args) == 0 || strings.TrimSpace(renameNames(args[0], names)) != k.loopBound {
		return nil, ""
	}
	g := fmt.Sprintf("cdiv(%s, %s)", k.loopBound, threads)
	how := fmt.Sprintf("from the launch at %s: %s read as one thread per element of %s", p.lines.at(lb.line), strings.Join(strings.Fields(lb.grid), " "), k.loopBound)
	if cap, line := functionCap(c.src, m[1]); cap > 0 {
		g = fmt.Sprintf("min(%s, %d)", g, cap)
		how += fmt.Sprintf(", at most %d groups as %s at %s caps it", cap, m[1], p.lines.at(line))
		return []string{g, "1", "1"}, how
	}
	how = withTODO(how, p.todo(fmt.Sprintf("if %s caps the groups, write the cap: min(%s, CAP)", m[1], g),
		"%s: the launch at %s has grid %s: mltop wrote %s (the grid-stride loop covers %s with any grid); if %s caps the groups, write min(…, CAP)", k.sig.Entry, p.lines.at(lb.line), strings.Join(strings.Fields(lb.grid), " "), g, k.loopBound, m[1]))
	return []string{g, "1", "1"}, how
}

// functionCap is the cap a grid helper of the source puts on the groups
// (`int max_block_num = 4096; return min(optimal_block_num,
// max_block_num);`): the one integer literal of 64 or more in its body,
// when the body takes a min (or compares); 0 when there is none or several.
func functionCap(src, name string) (int, int) {
	toks := csrc.Tokenize(src)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].Text != name || toks[i+1].Text != "(" || i > 0 && (toks[i-1].Text == "." || toks[i-1].Text == "->") {
			continue
		}
		close := csrc.Matching(toks, i+1)
		if close < 0 || close+1 >= len(toks) || toks[close+1].Text != "{" {
			continue
		}
		end := csrc.Matching(toks, close+1)
		if end < 0 {
			return 0, 0
		}
		body := toks[close+2 : end]
		if !hasText(body, "min") && !hasText(body, "<") && !hasText(body, "?") {
			return 0, 0
		}
		cap, line := 0, 0
		for _, t := range body {
			if v, err := strconv.Atoi(t.Text); err == nil && v >= 64 && v != cap {
				if cap != 0 {
					return 0, 0
				}
				cap, line = v, t.Line
			}
		}
		return cap, line
	}
	return 0, 0
}
