package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// kernelScan is one entry being mapped to a dispatch.
type kernelScan struct {
	sig      csrc.Signature
	tmpl     []tparam
	body     []csrc.Token
	block    string    // the knob that is the group's thread count
	sizeDims []string  // the kernel's dims, in parameter order
	newBufs  []*buffer // the buffers this dispatch added (their shapes follow its dims)
	// indexBufs are its integer inputs named like indices (tokens,
	// targets); vocab is the dim of its vocabulary-size parameter.
	indexBufs []*buffer
	vocab     string
	launch    *launchBlock // its host launch, when the source has one (findLaunch)
	// bounds is the first argument of its __launch_bounds__ as written
	// ("" without one), on line boundsLine
	bounds     string
	boundsLine int
	threads    []string // x, y, z threads of a 2-D or 3-D launch (threadsFromDim3); nil: [block, 1, 1]
	argsTODOs  []string // TODO comments for its args line
	argsNotes  []string // what its args line says first (how shape and stride arrays are bound: stridedLayout)
	// floatTypes are its template type parameters only by-value scalars
	// take (scalarOnlyTypes): float in the entry
	floatTypes map[string][]string
	// targs are the entry's template arguments by template parameter
	// (entryExpr): the names a shared array's extent may use
	targs map[string]string
	// targKnobs are the knobs its launch's literal (or constant) template
	// arguments became: a grid with that literal may mean the knob
	targKnobs []targKnob
	// loopBounds are its parameters that bound a grid-stride loop
	// (loopBounds); loopBound is the dim the first bound became
	loopBounds map[string]loopBound
	loopBound  string
	// args are the manifest names its parameters are bound to, in order
	args []string
	// notSize are its dims the body uses as no length (a shuffle's width,
	// a loop's stride: nonSizeUse), by dim, with that use: sizeOf leaves
	// them out of the buffers' guessed shape
	notSize map[string]string
}

const sweep = "[32, 64, 128, 256, 512, 1024]"

// addDispatch maps one kernel to a dispatch: its template arguments, its
// parameters (buffers, dims, values, flags, knobs), a guessed grid and
// its static shared arrays.
func (c *context) addDispatch(p *plan, sig csrc.Signature) *dispatch {
	at := entryAt(c.toks, sig)
	k := &kernelScan{sig: sig, tmpl: templateOf(c.toks, at), body: bodyOf(c.toks, at)}
	k.floatTypes = scalarOnlyTypes(sig, k.tmpl)
	for i, tp := range k.tmpl {
		if c.launchGivesDType(k, i) { // the launch passes the dtype's type: the scalar takes it
			delete(k.floatTypes, tp.name)
		}
	}
	k.bounds, k.boundsLine = csrc.LaunchBounds(c.toks, at)
	k.loopBounds = c.loopBounds(k)
	if lb, ok := findLaunch(c.src, sig.Entry); ok {
		k.launch = &lb
	}
	d := &dispatch{comment: fmt.Sprintf("%s: %s", p.lines.at(sig.Line), strings.ReplaceAll(sig.String(), " . . .", "..."))}
	d.entry = c.entryExpr(p, k)
	d.entryComment = floatTypesComment(k)
	if todo := c.otherLaunchesTODO(p, k); todo != "" {
		d.entryComment = withTODO(d.entryComment, todo)
	}
	d.args = c.bindParams(p, k)
	k.args = d.args
	boundIndices(k)
	if k.block == "" {
		d.threadsComment = c.blockFromSource(p, k)
	} else {
		capBlockKnob(p, k)
	}
	size := c.sizeOf(p, k)
	c.commentShapes(p, k, d.args)
	guessShapes(p, k, size)
	d.grid = []string{fmt.Sprintf("cdiv(%s, %s)", strings.Join(size, " * "), k.block), "1", "1"}
	d.threads = []string{k.block, "1", "1"}
	if k.threads != nil {
		d.threads = k.threads
		d.grid[0] = fmt.Sprintf("cdiv(%s, %s)", strings.Join(size, " * "), strings.Join(k.threads, " * "))
	}
	names := c.hostNames(p, k, d.args)
	if g := launchGrid3(k, p, names); g != nil {
		d.grid = g
		d.gridComment = fmt.Sprintf("from the launch at %s", p.lines.at(k.launch.line))
		gridTemplateLiterals(p, k, d)
	} else if g := launchGrid(k, p, names); g != "" && k.launch.gridDim3 == "" {
		d.grid[0] = g
		d.gridComment = fmt.Sprintf("from the launch at %s", p.lines.at(k.launch.line))
		gridTemplateLiterals(p, k, d)
	} else if g, how := c.strideGrid(p, k, names, threadCount(d.threads)); g != nil {
		d.grid, d.gridComment = g, how
	} else if dim := c.gridDim(p, k); dim != "" {
		d.grid = []string{dim, "1", "1"}
		d.gridComment = fmt.Sprintf("from the launch at %s: one group per %s", p.lines.at(k.launch.line), dim)
	} else {
		seen := ""
		if lb := k.launch; lb != nil {
			seen = fmt.Sprintf(" (the launch at %s has grid %s, which names no dims mltop knows)", p.lines.at(lb.line), orDim3(lb.grid, lb.gridDim3))
		}
		if k.loopBound != "" {
			seen += fmt.Sprintf("; the grid-stride loop covers %s with any grid", k.loopBound)
		}
		d.gridComment = p.todo(fmt.Sprintf("guessed one thread per element of %s; set the groups (blocks) your launch uses%s", strings.Join(size, "×"), seen),
			"%s: guessed grid %s × %s threads: set it to what your launch uses%s", sig.Entry, d.grid[0], strings.Join(d.threads, " × "), seen)
	}
	ruleForUnguarded(p, k, d)
	c.markCooperative(p, d, sig)
	d.argsComment = "the kernel's parameters, in order"
	if c.lang == "metal" && metalTakesStruct(c, k) {
		d.argsComment = "buffers, then the struct's fields (mltop packs them into one struct after the buffers)"
	}
	for _, t := range append(k.argsNotes, k.argsTODOs...) {
		d.argsComment = withTODO(d.argsComment, t)
	}
	d.tgm, d.dynamic = c.sharedItems(p, k, c.bodyText(k.body))
	if tg := metalThreadgroupParams(sig); len(tg) > 0 {
		// `threadgroup float* buf [[threadgroup(0)]]` (ggml's norms): sized
		// at dispatch (setThreadgroupMemoryLength), as an extern array is
		d.dynamic = append(d.dynamic, tg...)
		names := strings.Join(tg, ", ")
		d.dynamicComment = p.todo(fmt.Sprintf("bytes of threadgroup parameter %s, set at dispatch (setThreadgroupMemoryLength): what the kernel indexes it with says how many", names),
			"%s: threadgroup parameter %s: its memory is set at dispatch; write its bytes as dynamic_tgm: in the dispatch (the run stops without it)", sig.Entry, names)
	} else if len(d.dynamic) > 0 {
		names := strings.Join(d.dynamic, ", ")
		d.dynamicComment = p.todo(fmt.Sprintf("bytes of extern shared array %s, set at launch (what the third <<<…>>> argument gives)", names),
			"%s: extern shared array %s: its size is set at launch; write its bytes as dynamic_tgm: in the dispatch", sig.Entry, names)
	}
	p.disps = append(p.disps, d)
	return d
}

// threadCount is the product of a dispatch's x, y, z threads, its 1s left out.
func threadCount(threads []string) string {
	var n []string
	for _, t := range threads {
		if t != "1" {
			n = append(n, t)
		}
	}
	if len(n) == 0 {
		return "1"
	}
	return strings.Join(n, " * ")
}

// launchGrid is the grid of a kernel's host launch as the manifest's
// expression (hostNames renamed), "" when it has none mltop can express.
func launchGrid(k *kernelScan, p *plan, names map[string]string) string {
	if k.launch == nil {
		return ""
	}
	if e := gridExpr(renameNames(k.launch.grid, names), p); e != "" || k.launch.gridLocals == nil {
		return e
	}
	// the grid names locals of the launching function: their values
	grid := nameRun.ReplaceAllStringFunc(k.launch.grid, func(n string) string {
		if v, ok := k.launch.gridLocals[n]; ok {
			return "(" + v + ")"
		}
		return n
	})
	return gridExpr(renameNames(grid, names), p)
}

// orDim3 writes a launch's grid as the source gives it: its dim3's
// arguments when it is a dim3 variable.
func orDim3(grid, dim3 string) string {
	if dim3 != "" && identifier.MatchString(grid) {
		return fmt.Sprintf("dim3 %s(%s)", grid, dim3)
	}
	return "`" + grid + "`"
}

// guessShapes gives the buffers a dispatch added its size: a guess, with
// a TODO on each buffer's line and one note.
func guessShapes(p *plan, k *kernelScan, size []string) {
	if len(k.newBufs) == 0 {
		return
	}
	var names []string
	var guessed []*buffer
	for _, b := range k.newBufs {
		if b.shape == nil { // a ticket counter's shape is known
			names = append(names, b.name)
			guessed = append(guessed, b)
		}
	}
	if len(guessed) == 0 {
		return
	}
	comment := p.todo(fmt.Sprintf("shape guessed from %s's sizes", k.sig.Entry),
		"%s: guessed buffer shapes [%s] for %s: set them to what the kernel reads and writes", k.sig.Entry, strings.Join(size, ", "), strings.Join(names, ", "))
	for _, b := range guessed {
		b.shape, b.shapeComment = append(slices.Clip(size), b.lanes...), comment
		if b.rank > 0 { // a packed accessor: its rank's extents, padded with 1
			b.shape = slices.Clip(size)[:min(b.rank, len(size))]
			for len(b.shape) < b.rank {
				b.shape = append(b.shape, "1")
			}
			b.shapeComment = fmt.Sprintf("a packed accessor of rank %d: give its %d sizes; ", b.rank, b.rank) + comment
			continue
		}
		if b.lanesWhat != "" {
			b.shapeComment = b.lanesWhat + ", last in the shape; " + comment
		}
	}
}

// bodyText is the source lines the body spans; a body on one line is
// its own tokens: a kernel a macro writes is expanded onto the line that
// invokes the macro, beside the other kernels the macro writes (candle's
// impl_reduce writes NAME and NAME_strided on one line), whose shared
// arrays are not this kernel's.
func (c *context) bodyText(body []csrc.Token) string {
	if len(body) == 0 {
		return ""
	}
	if body[0].Line == body[len(body)-1].Line {
		return tokenText(body)
	}
	lines := strings.Split(c.src, "\n")
	from, to := body[0].Line-1, body[len(body)-1].Line
	if to > len(lines) {
		to = len(lines)
	}
	return csrc.BlankComments(strings.Join(lines[from:to], "\n")) // a shared array commented out is none
}

// tokenText writes tokens as C reads them: one space apart, none
// around `::` and `.`, before `(`, `[`, `)`, `]`, `,`, `;` or after `(`, `[`
// (`threadgroup float shared[1024]`, `metal::uint`).
func tokenText(toks []csrc.Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && !tightBefore[t.Text] && !tightAfter[toks[i-1].Text] {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

var (
	tightBefore = map[string]bool{"(": true, "[": true, ")": true, "]": true, ",": true, ";": true, "::": true, ".": true}
	tightAfter  = map[string]bool{"(": true, "[": true, "::": true, ".": true}
)

// entryExpr writes the entry: its C++ name and, for a template, the
// arguments mltop fills in (the dtype name, knobs, flags).
func (c *context) entryExpr(p *plan, k *kernelScan) string {
	name := k.sig.Qualified()
	if len(k.tmpl) == 0 {
		return name
	}
	var args []string
	for i, tp := range k.tmpl {
		if lt := c.launchTArgs[sigKey(k.sig)]; lt != nil && lt.instances && i >= len(lt.args) {
			break // the [[host_name]] instances leave the rest to their defaults (coversTemplate): so does the entry
		}
		if pack := c.packArgs(k); tp.pack && pack != nil { // the launch names the pack's types: the entry names them too
			args = append(args, pack...)
			break
		}
		if a := c.launchTArg(p, k, i); a != "" {
			if !tp.isType && blockLike.MatchString(tp.name) && p.taken[a] == "knob" {
				k.block = a
			}
			args = append(args, a)
			continue
		}
		switch {
		case tp.isType && k.floatTypes[tp.name] != nil:
			args = append(args, "float")
		case tp.isType:
			c.usesDType = true
			args = append(args, c.dtypeName)
		case blockLike.MatchString(tp.name):
			k.block = c.blockKnob(p, tp.name, tp.def, "template parameter")
			args = append(args, k.block)
		case tp.ctype == "bool":
			n, isNew := p.claim(safeName(tp.name, c.dtypeName), "flag")
			if isNew {
				p.flags = append(p.flags, part{name: n, body: fmt.Sprintf("{default: %t}", tp.def == "true"), comment: "template parameter of " + k.sig.Entry})
			}
			args = append(args, n)
		default:
			if body, why, ok := c.enumKnob(tp.ctype, tp.def); ok {
				n, isNew := p.claim(safeName(tp.name, c.dtypeName), "knob")
				if isNew {
					p.knobs = append(p.knobs, part{name: n, body: body, comment: "template parameter " + tp.name + ": " + why})
				}
				args = append(args, n)
				continue
			}
			v, err := strconv.Atoi(tp.def)
			if err != nil || v <= 0 {
				v = 1
			}
			n, isNew := p.claim(safeName(tp.name, c.dtypeName), "knob")
			if isNew {
				comment := p.todo(fmt.Sprintf("the values of template parameter %s to sweep", tp.name),
					"template parameter %s of %s is knob %s with the one value %d: list the values to sweep", tp.name, k.sig.Entry, n, v)
				p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: [%d], default: %d}", v, v), comment: comment})
			}
			args = append(args, n)
		}
	}
	k.targs = map[string]string{}
	for i, tp := range k.tmpl {
		if i < len(args) {
			k.targs[tp.name] = args[i]
		}
	}
	return name + "<" + strings.Join(args, ", ") + ">"
}

// blockKnob adds (once) a knob for a thread count that mltop may sweep.
func (c *context) blockKnob(p *plan, name, def, what string) string {
	n, isNew := p.claim(safeName(name, c.dtypeName), "knob")
	if !isNew {
		return n
	}
	v, err := strconv.Atoi(def)
	if err != nil || v < 32 || v > 1024 || v&(v-1) != 0 {
		v = 256
	}
	p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: %s, default: %d, doc: threads per group}", sweep, v), comment: fmt.Sprintf("from the %s %s", what, name)})
	return n
}

// blockFromSource finds the thread count of a kernel with no block-size
// parameter: a block-size macro or constant of the source that the body
// uses, else its host launch's (blockFromLaunch), else a WG knob. It returns the threads line's comment.
func (c *context) blockFromSource(p *plan, k *kernelScan) string {
	if lb := k.launch; lb != nil && lb.dim3 != "" && c.threadsFromDim3(k, *lb) {
		// a literal 2-D or 3-D block (llm-awq's dim3 threads_per_block(32, 4)
		// beside __launch_bounds__(128)): the threads the kernel indexes
		return ""
	}
	if c.blockFromBounds(p, k) {
		return ""
	}
	for _, cn := range c.consts {
		if mentions(k.body, cn.name) {
			c.constantBlock(p, k, cn)
			return ""
		}
	}
	if c.blockFromLaunch(p, k) {
		return ""
	}
	n, isNew := p.claim("WG", "knob")
	k.block = n
	if isNew {
		p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: %s, default: 256, doc: threads per group}", sweep), comment: "TODO: the kernel's block size was not found; WG is the threads per group"})
	}
	if lb := k.launch; lb != nil && lb.dim3 != "" { // several dimensions (and the name may be CUDA's own blockDim)
		d3 := "dim3 " + lb.name
		if lb.name == "" { // k<<<g, dim3(bx, by)>>>
			d3 = "dim3"
		}
		return p.todo(fmt.Sprintf("the launch at %s uses %s(%s): set the x, y, z threads", p.lines.at(lb.line), d3, lb.dim3),
			"%s: its launch at %s uses %s(%s) threads: set threads: to those x, y, z", k.sig.Entry, p.lines.at(lb.line), d3, lb.dim3)
	}
	seen := ""
	switch {
	case k.bounds != "":
		seen = fmt.Sprintf(" (its __launch_bounds__(%s) at %s is no number or constant mltop reads)", k.bounds, p.lines.at(k.boundsLine))
	case k.launch != nil && k.launch.unread != "":
		seen = fmt.Sprintf(" (the launch at %s passes `%s`, which mltop cannot read)", p.lines.at(k.launch.line), k.launch.unread)
	}
	return p.todo("threads per group; the source names no block size for this kernel"+seen,
		"%s: the source names no block size for it%s: threads: [%s, 1, 1]; set the threads your launch uses", k.sig.Entry, seen, n)
}

// constantBlock makes a block-size #define or constant of the source the
// kernel's thread count: a knob that sweeps it when an #ifndef guards
// its #define, else a knob of its one value (the source fixes it).
func (c *context) constantBlock(p *plan, k *kernelScan, cn constant) {
	if cn.guarded {
		k.block = c.blockKnob(p, cn.name, strconv.Itoa(cn.value), "#ifndef-guarded macro")
		return
	}
	n, isNew := p.claim(cn.name, "knob")
	k.block = n
	if isNew {
		value := strconv.Itoa(cn.value)
		if cn.expr != "" {
			value = cn.expr + " = " + value
		}
		if cn.what == "constant" { // constant kBlock = sizeof(…) * 8 = 64
			value = "= " + value
		}
		comment := p.todo(fmt.Sprintf("fixed by the source (%s: %s %s %s); wrap a #define in #ifndef %s to sweep it", p.lines.at(cn.line), cn.what, cn.name, value, cn.name),
			"%s is fixed by the source (%s): knob %s has the one value %d; guard its #define with #ifndef to sweep it, or drop the knob (manifest expressions may name the source's %s)", cn.name, p.lines.at(cn.line), n, cn.value, cn.name)
		p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: [%d], default: %d, doc: threads per group}", cn.value, cn.value), comment: comment})
	}
}

// sizeOf guesses the element count a kernel covers: an N-like dim alone,
// else its dims (as many as keep the default size under 16M elements),
// else a new N.
func (c *context) sizeOf(p *plan, k *kernelScan) []string {
	if k.loopBound != "" {
		return []string{k.loopBound}
	}
	for _, d := range k.sizeDims {
		if nLike.MatchString(d) {
			return []string{d}
		}
	}
	var out []string
	prod := 1
	for _, d := range k.sizeDims {
		if k.notSize[d] != "" {
			continue
		}
		v := defaultOf(p, d)
		if prod*v > 1<<24 && len(out) > 0 {
			break
		}
		prod *= v
		out = append(out, d)
	}
	if len(out) == 0 {
		if n := c.gridLength(p, k); n != "" {
			return []string{n}
		}
		n, isNew := p.claim("N", "dim")
		if isNew {
			p.dims = append(p.dims, part{name: n, body: "{default: 1048576, min: 1}", comment: "TODO: the problem size (the kernel takes none)"})
		}
		out = []string{n}
	}
	return out
}

var nLike = regexp.MustCompile(`(?i)^(n|count|size|numel|num_?elements|total|len|length)$`)

func defaultOf(p *plan, dim string) int {
	for _, d := range p.dims {
		if d.name == dim {
			var v int
			fmt.Sscanf(strings.TrimPrefix(d.body, "{default: "), "%d", &v)
			if v > 0 {
				return v
			}
		}
	}
	return 1024
}

// safeName renames a parameter that is a macro mltop defines or dtype
// (user.Reserved); a name that is a CSV column (n, time, …) stays, as the
// source spells it (T stays when the dtype has another name).
func safeName(name, dtypeName string) string {
	if user.CUDABuiltin(name) { // a knob of that name would hide the built-in (and is refused)
		if name == "blockDim" {
			return "WG"
		}
		return name + "_"
	}
	if _, taken := user.Reserved[name]; !taken || name == "T" && dtypeName != "T" {
		return name
	}
	u := strings.ToUpper(name)
	if _, taken := user.Reserved[u]; !taken {
		return u
	}
	return name + "_"
}

// metalThreadgroupParams are a Metal kernel's threadgroup memory
// parameters (`threadgroup float* buf [[threadgroup(0)]]`), as
// "buf [[threadgroup(0)]] (float)".
func metalThreadgroupParams(sig csrc.Signature) []string {
	var out []string
	for _, prm := range sig.Params {
		if strings.HasPrefix(prm.Attr, "threadgroup(") {
			out = append(out, fmt.Sprintf("%s [[%s]] (%s)", prm.Name, prm.Attr, prm.Pointee))
		}
	}
	return out
}
