package scaffold

import (
	"fmt"
	"regexp"
	"strings"
)

// commentShape is `name(b, m, 3)` in a comment: a buffer and its sizes.
var commentShape = regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(([^()]*)\)`)

// declPrefix is a line of a kernel's declaration ahead of its name's line
// (`template <typename T>`, `__global__ void`).
var declPrefix = regexp.MustCompile(`^(template\b|__global__\b|extern\b|static\b|__launch_bounds__\b|kernel\b|\[\[)`)

// commentShapes gives the buffers a dispatch added the shapes the comment
// right above the kernel writes for them, as Pointnet2's kernels document
// theirs (`// input: new_xyz(b, m, 3) xyz(b, n, 3)`, `// output: idx(b,
// m, nsample)`): each size an integer or a parameter of the kernel bound
// to a dim or knob (its manifest name: n is dim N). A buffer the comment
// does not size, or sizes with another name, keeps its guess.
func (c *context) commentShapes(p *plan, k *kernelScan, args []string) {
	if len(k.newBufs) == 0 {
		return
	}
	comment, line := c.commentAbove(k.sig.Line)
	if comment == "" {
		return
	}
	params := k.sig.Bindable()
	if len(params) != len(args) {
		return
	}
	sizeName := map[string]string{} // a parameter → its dim or knob
	bufParam := map[string]string{} // a buffer → its parameter
	for i, pr := range params {
		switch {
		case p.taken[args[i]] == "dim" || p.taken[args[i]] == "knob":
			sizeName[pr.Name] = args[i]
		case pr.Pointer:
			bufParam[args[i]] = pr.Name
		}
	}
	shapes := map[string][]string{}
	for _, m := range commentShape.FindAllStringSubmatch(comment, -1) {
		var shape []string
		for _, s := range strings.Split(m[2], ",") {
			s = strings.TrimSpace(s)
			switch {
			case intLiteral.MatchString(s):
				shape = append(shape, s)
			case sizeName[s] != "":
				shape = append(shape, sizeName[s])
			default:
				shape = nil
			}
			if shape == nil {
				break
			}
		}
		if len(shape) > 0 {
			shapes[m[1]] = shape
		}
	}
	for _, b := range k.newBufs {
		if s := shapes[bufParam[b.name]]; b.shape == nil && s != nil && b.rank == 0 && b.lanes == nil {
			b.shape = s
			b.shapeComment = fmt.Sprintf("shape from the comment at %s", p.lines.at(line))
		}
	}
}

// commentAbove is the comment right above the declaration whose name is
// on line (1-based), past the declaration's own lines, and the line it
// starts on; "" when there is none.
func (c *context) commentAbove(line int) (string, int) {
	lines := strings.Split(c.src, "\n")
	i := line - 2 // the line above the name's
	for i >= 0 && declPrefix.MatchString(strings.TrimSpace(lines[i])) {
		i--
	}
	end := i
	for i >= 0 {
		t := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "/*") && !strings.HasPrefix(t, "*") {
			break
		}
		i--
	}
	if i == end {
		return "", 0
	}
	return strings.Join(lines[i+1:end+1], "\n"), i + 2
}
