package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// launchBlock is what a host launch of a kernel says of its thread count:
// `kern<<<grid, BLOCK>>>(…)` in the source's own host code (a whole
// program: llm.c's `layernorm_forward_kernel3<<<grid_size, block_size>>>`).
type launchBlock struct {
	grid   string // the grid expression, its variable's value when it is one
	name   string // the variable or parameter; "" for a literal
	value  int    // its value where the source gives one (0: unknown)
	values []int  // the values the program sweeps (an `int block_sizes[] = {…}`)
	line   int
	dim3   string // the arguments of a 2-D or 3-D `dim3 NAME(x, y)` block: no 1-D knob fits it
	// blockExpr is a 1-D block written as an expression (`dim3
	// threadsPerBlock(min(C, 32))`, `<<<g, min(n, 1024)>>>`): the threads
	// when it names only dims (blockFromLaunch)
	blockExpr string
	// gridDim3 are the arguments of the grid's `dim3 NAME(x, y)`, "" when
	// the grid is no dim3 variable
	gridDim3 string
	// gridName is the variable that holds a one-dimensional grid (`tokens`,
	// `dim3 grid(num_tokens)`: num_tokens), "" when the grid is no name
	gridName string
	// gridLocals are the values the launching function gives the names of
	// a grid expression that are no launch argument (hqq's `int n = h*w;`
	// before `<<<cdiv(n, BLOCK_SIZE), …>>>`: n is h*w)
	gridLocals map[string]string
	// fixedBy is the #define or file-scope constant that gives the block
	// size (`k<<<g, NT>>>`, `dim3 block(NT)`): the source fixes it, as a
	// literal does
	fixedBy *constant
	args    []string // the launch's arguments, as written
	// blockText is the block as the launch writes it, the arguments of
	// its dim3 when it is a dim3 variable ("THREADS_X, THREADS_Y, 1")
	blockText string
	unread    string // a block size mltop cannot read (`threadsFor(n)`), "" otherwise
}

var (
	intLiteral = regexp.MustCompile(`^\d+$`)
	identifier = regexp.MustCompile(`^[A-Za-z_]\w*$`)
	nameRun    = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// findLaunch reads the first launch of entry in src (its thread count,
// the second <<<…>>> argument): a literal, a #define or file-scope
// constant, or a name the launching function sets to a number (`int bs =
// 256`, `dim3 block(256)`), or one of its parameters, with the list of
// values the program loops over when it has one. A block size it cannot
// read is kept as written (unread), for the TODO to say.
func findLaunch(src, entry string) (launchBlock, bool) {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(entry) + `\s*(?:<[^;]*?>)?\s*<<<([^;]*?)>>>`)
	type launch struct {
		m    []int // start, end, the <<<…>>> contents' start and end
		name string
	}
	var launches []launch
	for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
		launches = append(launches, launch{m, entry})
	}
	if len(launches) == 0 { // none names the entry: one through a variable (fnptr.go)
		for _, pl := range pointerLaunches(src, entry) {
			launches = append(launches, launch{[]int{pl.at, pl.end, pl.config[0], pl.config[1]}, pl.name})
		}
	}
	var toks []csrc.Token
	for _, l := range launches {
		m := l.m
		lineStart := strings.LastIndex(src[:m[0]], "\n") + 1
		if strings.HasPrefix(strings.TrimSpace(src[lineStart:m[0]]), "//") {
			continue // a launch in a comment
		}
		if toks == nil {
			toks = csrc.Tokenize(src)
		}
		config := splitArgs(src[m[2]:m[3]]) // grid, block[, shared bytes[, stream]]
		if len(config) < 2 || config[0] == "" || config[1] == "" {
			continue
		}
		lb := launchBlock{line: strings.Count(src[:m[0]], "\n") + 1, args: callArgs(src[m[1]:])}
		scope := src[functionStart(src, toks, l.name, lb.line):m[0]]
		lb.grid = config[0]
		if args, ok := inlineDim3(lb.grid); ok { // k<<<dim3(B * H), dim3(_N_)>>> (RWKV's wkv)
			if oneDim(args) {
				lb.grid = splitArgs(args)[0]
			} else {
				lb.gridDim3 = args
			}
		}
		if identifier.MatchString(lb.grid) {
			lb.gridDim3 = dim3Args(scope, lb.grid)
		}
		lb.gridName = oneDimGridName(lb.grid, lb.gridDim3)
		if identifier.MatchString(lb.grid) && lb.gridDim3 == "" {
			if e := assignedExpr(scope, lb.grid); e != "" {
				lb.grid = e
			}
		}
		if !identifier.MatchString(lb.grid) {
			for _, n := range nameRun.FindAllString(lb.grid, -1) {
				if e := assignedExpr(scope, n); e != "" && !slices.Contains(lb.args, n) {
					if lb.gridLocals == nil {
						lb.gridLocals = map[string]string{}
					}
					lb.gridLocals[n] = e
				}
			}
		}
		block := config[1]
		if args, ok := inlineDim3(block); ok {
			if !oneDim(args) {
				lb.blockText, lb.dim3 = args, args
				return lb, true
			}
			block = splitArgs(args)[0]
		}
		lb.blockText = block
		if identifier.MatchString(block) {
			if d := dim3Args(scope, block); d != "" {
				lb.blockText = d
			}
		}
		switch {
		case intLiteral.MatchString(block):
			lb.value, _ = strconv.Atoi(block)
		case identifier.MatchString(block):
			lb.name = block
			if d := dim3Args(scope, block); d != "" {
				if !oneDim(d) {
					lb.dim3 = d
					return lb, true
				}
				block = splitArgs(d)[0]            // dim3 block(NT): NT may be a constant
				if intLiteral.MatchString(block) { // block.x = 256
					lb.value, _ = strconv.Atoi(block)
					return lb, true
				}
				if !identifier.MatchString(block) { // dim3 threadsPerBlock(min(C, 32)) (RWKV-4's wkv)
					lb.blockExpr = block
				}
			}
			if cn, ok := constantNamed(src, block); ok && (block != lb.name || assignedInt(scope, block) == 0) {
				lb.value, lb.fixedBy = cn.value, &cn
				return lb, true
			}
			if lb.value = assignedInt(scope, lb.name); lb.value == 0 && block != lb.name {
				lb.value = assignedInt(scope, block) // dim3 block(nthreads), int nthreads = 128
			}
			lb.values = sweptValues(src, lb.name)
		default:
			lb.unread, lb.blockExpr = block, block
		}
		return lb, true
	}
	return launchBlock{}, false
}

// blockIsParam says whether the host launch of k gives its block the
// value of parameter pname: the block (or its dim3's x) names the
// parameter or what the launch passes in its place (`k<<<g, bs>>>(x, bs)`,
// `dim3 block(block_size)`, a literal passed as both). With no launch to
// read (a kernel file alone, a block mltop cannot read) the name alone
// says so; exllama's `groupsize`, launched with `dim3
// threads(THREADS_X, THREADS_Y, 1)` and passed w->groupsize, is no
// thread count.
func blockIsParam(k *kernelScan, pname string) bool {
	lb := k.launch
	if lb == nil || lb.blockText == "" || lb.unread != "" {
		return true
	}
	x := splitArgs(lb.blockText)[0]
	names := []string{pname}
	if params := k.sig.Bindable(); len(lb.args) == len(params) {
		for i, prm := range params {
			if prm.Name != pname {
				continue
			}
			a := strings.TrimSpace(lb.args[i])
			if a == x || a == lb.blockText || lb.name != "" && strings.Join(strings.Fields(a), "") == lb.name+".x" {
				return true
			}
			if identifier.MatchString(a) {
				names = append(names, a)
			}
		}
	}
	for _, n := range names {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`).MatchString(x) {
			return true
		}
	}
	return false
}

// spacedChevrons is a launch configuration whose chevrons a formatter
// spaced apart (`renderCUDA<NUM_CHANNELS> << <grid, block >> > (…)`, as
// graphdeco-inria's diff-gaussian-rasterization writes its launches):
// nvcc reads `<< <` and `>> >` as `<<<` and `>>>`.
var spacedChevrons = regexp.MustCompile(`<<([ \t]*)<([^;]*?)>>([ \t]*)>`)

// joinLaunchChevrons writes each spaced launch configuration with its
// chevrons joined, the spaces moved after them: every offset and line of
// src stays where it was, and the launch reads as `<<<grid, block>>>`.
func joinLaunchChevrons(src string) string {
	if !strings.Contains(src, "<< <") && !strings.Contains(src, "<<\t<") {
		return src
	}
	return spacedChevrons.ReplaceAllStringFunc(src, func(m string) string {
		g := spacedChevrons.FindStringSubmatch(m)
		if g[1] == "" && g[3] == "" {
			return m
		}
		return "<<<" + g[1] + g[2] + ">>>" + g[3]
	})
}

// constantNamed is the source's integer #define or file-scope constant
// of that name.
func constantNamed(src, name string) (constant, bool) {
	for _, cn := range fileConstants(src) {
		if cn.name == name {
			return cn, true
		}
	}
	return constant{}, false
}

// callArgs are the arguments of the call whose parenthesized list starts
// rest (after a launch's >>>), each trimmed; nil when rest starts no list.
func callArgs(rest string) []string {
	rest = strings.TrimLeft(rest, " \t\r\n")
	if !strings.HasPrefix(rest, "(") {
		return nil
	}
	depth := 0
	for i, r := range rest {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				if strings.TrimSpace(rest[1:i]) == "" {
					return nil
				}
				return splitArgs(rest[1:i])
			}
		case ';':
			return nil
		}
	}
	return nil
}

// functionStart is the offset of the line where the body of the function
// holding the launch of entry at line opens: the outermost brace after a
// `)` among those open there (namespaces and extern "C" blocks open after
// a name or a string). 0 when there is none.
func functionStart(src string, toks []csrc.Token, entry string, line int) int {
	type open struct {
		line int
		body bool // after a `)`: a function's (or a loop's, inside one)
	}
	var stack []open
	for i, t := range toks {
		if t.Line > line || t.Line == line && t.Text == entry {
			break
		}
		switch t.Text {
		case "{":
			stack = append(stack, open{t.Line, i > 0 && toks[i-1].Text == ")"})
		case "}":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	for _, o := range stack {
		if o.body {
			return lineOffset(src, o.line)
		}
	}
	return 0
}

// lineOffset is the offset of 1-based line n in src.
func lineOffset(src string, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			return len(src)
		}
		off += i + 1
	}
	return off
}

// assignedInt is the last `NAME = 123` (or `dim3 NAME(123)`) before a
// launch, 0 when there is none.
func assignedInt(before, name string) int {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*(?:=\s*|\(\s*)(\d+)\s*[;),]`)
	all := re.FindAllStringSubmatch(before, -1)
	if len(all) == 0 {
		return 0
	}
	v, _ := strconv.Atoi(all[len(all)-1][1])
	return v
}

// dim3Args are the arguments of the last `dim3 NAME(…)` or `dim3 NAME =
// dim3(…)` before a launch, "" when NAME is not a dim3.
//
// A dim3 declared without arguments whose members are then set (`dim3
// blockDim, gridDim; blockDim.x = NUM_THREADS; blockDim.y = 1;`) has the
// members' last values as its arguments ("NUM_THREADS, 1, 1"; a member
// not set is 1).
func dim3Args(before, name string) string {
	q := regexp.QuoteMeta(name)
	re := regexp.MustCompile(`\bdim3\s+` + q + `\s*(?:=\s*dim3\s*)?[({]([^;]*?)[)}]\s*;`)
	all := re.FindAllStringSubmatch(before, -1)
	if len(all) > 0 {
		return strings.TrimSpace(all[len(all)-1][1])
	}
	decl := regexp.MustCompile(`\bdim3\s+(?:[A-Za-z_]\w*\s*,\s*)*`+q+`\s*[,;]`).FindAllStringIndex(before, -1)
	if len(decl) == 0 {
		return ""
	}
	after := before[decl[len(decl)-1][1]:]
	args := []string{"1", "1", "1"}
	set := false
	for i, m := range []string{"x", "y", "z"} {
		if e := assignedExpr(after, name+"."+m); e != "" {
			args[i], set = e, true
		}
	}
	if !set {
		return ""
	}
	return strings.Join(args, ", ")
}

// dim3Call is a dim3 made in place: `dim3(B * H)`, `dim3{32, 4}`.
var dim3Call = regexp.MustCompile(`^dim3\s*(?:\(([^;]*)\)|\{([^;]*)\})$`)

// inlineDim3 are the arguments of a launch's grid or block written as a
// dim3 made in place (`k<<<dim3(B * H), dim3(_N_)>>>`), false when it is
// none.
func inlineDim3(s string) (string, bool) {
	m := dim3Call.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	args := strings.TrimSpace(m[1] + m[2])
	if args == "" || len(splitArgs(args)) > 3 {
		return "", false
	}
	return args, true
}

// oneDim says whether dim3 arguments ("256", "BLOCK, 1, 1") have one
// dimension: a 1-D dim3 block is a thread count like any other.
func oneDim(args string) bool {
	for _, p := range splitArgs(args)[1:] {
		if p != "1" {
			return false
		}
	}
	return true
}

// splitArgs splits a call's arguments at the commas outside parentheses,
// braces and template argument lists (`Functor<float, float>()`), each
// trimmed.
func splitArgs(args string) []string {
	depth, parts := 0, []string{""}
	for i := 0; i < len(args); i++ {
		r := args[i]
		switch {
		case r == '<' && depth >= 0:
			if end := templateListEnd(args, i); end > i {
				parts[len(parts)-1] += args[i : end+1]
				i = end
				continue
			}
		case r == '(' || r == '{' || r == '[':
			depth++
		case r == ')' || r == '}' || r == ']':
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, "")
			continue
		}
		parts[len(parts)-1] += string(r)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// assignedExpr is the expression of the last `NAME = EXPR;` before a
// launch, "" when there is none or when the program changes NAME after it
// (`loc_block_info++`, `n_blocks += 1`): a count it makes at run time.
func assignedExpr(before, name string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*=\s*([^;=]+);`)
	all := re.FindAllStringSubmatchIndex(before, -1)
	if len(all) == 0 {
		return ""
	}
	last := all[len(all)-1]
	changed := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*(?:\+\+|--|[-+*/%&|^]=|<<=|>>=)|(?:\+\+|--)\s*` + regexp.QuoteMeta(name) + `\b`)
	if changed.MatchString(before[last[1]:]) {
		return ""
	}
	return strings.TrimSpace(before[last[2]:last[3]])
}

// intCast matches a C cast to an integer type, which the manifest's
// expressions do without: (long) block_size.
var intCast = regexp.MustCompile(`\(\s*(?:unsigned\s+)?(?:long\s+long|long|int|size_t|unsigned|int64_t|uint64_t|int32_t|uint32_t)\s*\)`)

// ceilDivName matches the ceiling-division helpers programs define.
var ceilDivName = regexp.MustCompile(`\b(?:ceil_div|CEIL_DIV|ceilDiv|div_up|DIV_UP|divUp|cdiv)\s*\(`)

// gridExpr turns a launch's grid into the manifest's expression when every
// name in it is a dim or knob of the plan (ceil_div(N * 32, block_size) →
// cdiv(N * 32, block_size)); "" otherwise.
func gridExpr(grid string, p *plan) string {
	e := ceilDivName.ReplaceAllString(grid, "cdiv(")
	e = strings.Join(strings.Fields(intCast.ReplaceAllString(e, "")), " ")
	for _, name := range nameRun.FindAllString(e, -1) {
		if kind := p.taken[name]; name != "cdiv" && name != "min" && name != "max" && kind != "dim" && kind != "knob" {
			return ""
		}
	}
	if strings.ContainsAny(e, "?:{}[]\"'") {
		return ""
	}
	if v, ok := csrc.IntConst(e, nil); ok && v <= 0 { // no groups: never a grid (a count the program makes at run time)
		return ""
	}
	return e
}

// sweptValues are the values of an array the program loops a launch
// parameter over (`int block_sizes[] = {32, 64, 128};` for block_size).
func sweptValues(src, name string) []int {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `(?:s|es)\s*\[\s*\d*\s*\]\s*=\s*\{([\d\s,]+)\}`)
	m := re.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	var vs []int
	for _, f := range strings.Split(m[1], ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// blockFromLaunch makes the thread count of kernel k a knob from its host
// launch, when the source has one; false when it has none mltop can read.
func (c *context) blockFromLaunch(p *plan, k *kernelScan) bool {
	if k.launch == nil {
		return false
	}
	lb := *k.launch
	if lb.blockExpr != "" {
		// the launch's threads are an expression of the kernel's sizes:
		// those threads, no knob (the launch picks them per shape)
		if e := gridExpr(renameNames(lb.blockExpr, c.hostNames(p, k, k.args)), p); e != "" && !intLiteral.MatchString(e) && !identifier.MatchString(e) {
			k.block = e
			return true
		}
	}
	if lb.unread != "" {
		return false
	}
	if lb.dim3 != "" { // several dimensions: literal ones are the threads, else blockFromSource's TODO says so
		return c.threadsFromDim3(k, lb)
	}
	name := lb.name
	if name == "" || lb.fixedBy != nil { // not the source's own macro or constant: a knob of that name would clash with it
		name = "WG"
	}
	n, isNew := p.claim(safeName(name, c.dtypeName), "knob")
	k.block = n
	if !isNew {
		return true
	}
	var body, comment string
	switch {
	case lb.name == "" || lb.fixedBy != nil: // fixed by the source: the kernel may rely on it (shared arrays)
		body = fmt.Sprintf("{values: [%d], default: %d, doc: threads per group}", lb.value, lb.value)
		threads := fmt.Sprintf("%d threads", lb.value)
		if cn := lb.fixedBy; cn != nil {
			threads += fmt.Sprintf(" (%s, %s at %s)", cn.name, cn.what, p.lines.at(cn.line))
		}
		comment = p.todo(fmt.Sprintf("the launch at %s uses %s; list other values to sweep if the kernel allows them", p.lines.at(lb.line), threads),
			"%s: its launch at %s uses %s: knob %s has that one value; list others to sweep if the kernel allows them", k.sig.Entry, p.lines.at(lb.line), threads, n)
	case len(lb.values) > 0:
		def := lb.values[0]
		for _, v := range lb.values {
			if v == 256 || v == lb.value {
				def = v
			}
		}
		body = fmt.Sprintf("{values: %s, default: %d, doc: threads per group}", intList(lb.values), def)
		comment = fmt.Sprintf("from the launch at %s and the values the program loops %s over", p.lines.at(lb.line), lb.name)
	default:
		def := lb.value
		if def < 32 || def > 1024 || def&(def-1) != 0 {
			def = 256
		}
		body = fmt.Sprintf("{values: %s, default: %d, doc: threads per group}", sweep, def)
		comment = fmt.Sprintf("from the launch at %s (%s threads)", p.lines.at(lb.line), lb.name)
	}
	p.knobs = append(p.knobs, part{name: n, body: body, comment: comment})
	return true
}

func intList(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// threadsFromDim3 sets the threads of a kernel launched with a 2-D or 3-D
// block of constant sizes (`dim3 block(16, 16)`, exllama's `dim3
// threads(THREADS_X, THREADS_Y, 1)` of file-scope `const int`s or
// #defines, an expression of them): each size its value; false when a
// size is no constant.
func (c *context) threadsFromDim3(k *kernelScan, lb launchBlock) bool {
	parts := splitArgs(lb.dim3)
	if len(parts) > 3 {
		return false
	}
	for len(parts) < 3 {
		parts = append(parts, "1")
	}
	var consts map[string]string
	for i, x := range parts {
		if intLiteral.MatchString(x) {
			continue
		}
		if consts == nil {
			consts = map[string]string{}
			for _, cn := range fileConstants(c.src) {
				consts[cn.name] = strconv.Itoa(cn.value)
			}
		}
		v, ok := csrc.IntConst(x, consts)
		if !ok || v <= 0 {
			return false
		}
		parts[i] = strconv.FormatInt(v, 10)
	}
	k.threads, k.block = parts, parts[0]
	return true
}

// launchGrid3 is the grid of a kernel launched with a dim3 grid variable
// (`dim3 grid(cdiv(W, 16), cdiv(H, 16))`, `dim3 grid(1024)`), each size
// as the manifest's expression (hostNames renamed); nil when one is not
// an expression of dims and knobs.
func launchGrid3(k *kernelScan, p *plan, names map[string]string) []string {
	if k.launch == nil || k.launch.gridDim3 == "" {
		return nil
	}
	parts := splitArgs(k.launch.gridDim3)
	if len(parts) > 3 {
		return nil
	}
	out := []string{"1", "1", "1"}
	for i, x := range parts {
		if out[i] = gridExpr(renameNames(x, names), p); out[i] == "" {
			return nil
		}
	}
	return out
}

// hostNames map the names a launch's grid may read to the manifest's: the
// launch's arguments (`k<<<(n + 255) / 256, 256>>>(x, y, n)`: n is the
// dim bound to the kernel's parameter in that place) and the kernel's
// parameter names (a launching wrapper that names them alike) to the
// dims and knobs bound to those parameters (args, in parameter order);
// the block-size variable (and its .x) to the threads knob; the source's
// integer #defines and file-scope constants to their values.
func (c *context) hostNames(p *plan, k *kernelScan, args []string) map[string]string {
	names := map[string]string{}
	for _, cn := range fileConstants(c.src) {
		names[cn.name] = strconv.Itoa(cn.value)
	}
	for _, tk := range k.targKnobs {
		if tk.constant != "" { // the launch's template argument: the grid's use of it is the knob's
			names[tk.constant] = tk.knob
		}
	}
	dimOrKnob := func(i int) bool {
		return i < len(args) && (p.taken[args[i]] == "dim" || p.taken[args[i]] == "knob")
	}
	params := k.sig.Bindable()
	if len(params) != len(args) {
		return names // a parameter bound to several args (a struct's fields): no place matches
	}
	for i, prm := range params {
		if dimOrKnob(i) && prm.Name != "" {
			names[prm.Name] = args[i]
		}
	}
	lb := k.launch
	if lb == nil {
		return names
	}
	if len(lb.args) == len(params) {
		for i, a := range lb.args {
			if dimOrKnob(i) && identifier.MatchString(a) {
				names[a] = args[i]
			}
		}
	}
	if lb.name != "" && lb.dim3 != "" && k.threads != nil { // a 2-D or 3-D block: its sizes (threadsFromDim3)
		for i, m := range []string{".x", ".y", ".z"} {
			names[lb.name+m] = k.threads[i]
		}
	}
	if lb.name != "" && k.block != "" && k.threads == nil && p.taken[k.block] == "knob" {
		names[lb.name], names[lb.name+".x"] = k.block, k.block
		if lb.fixedBy != nil {
			names[lb.fixedBy.name] = k.block
		}
	}
	if lb.name != "" && lb.blockExpr != "" && k.block != "" && k.threads == nil && p.taken[k.block] == "" { // threads an expression of dims (blockFromLaunch)
		names[lb.name], names[lb.name+".x"] = "("+k.block+")", "("+k.block+")"
	}
	return names
}

// hostName is a name an expression of host code may read, with a dim3's
// .x, .y or .z.
var hostName = regexp.MustCompile(`[A-Za-z_]\w*(?:\s*\.\s*[xyz]\b)?`)

// renameNames replaces the names of e that names maps; the others stay
// (gridExpr refuses an expression that keeps one of the host's).
func renameNames(e string, names map[string]string) string {
	return hostName.ReplaceAllStringFunc(e, func(n string) string {
		if to, ok := names[strings.Join(strings.Fields(n), "")]; ok {
			return to
		}
		return n
	})
}

// oneDimGridName is the name a one-dimensional launch grid is: the grid
// itself (`k<<<tokens, 256>>>`) or the one size of its dim3 (`dim3
// grid(num_tokens)`); "" otherwise.
func oneDimGridName(grid, dim3 string) string {
	if dim3 == "" {
		if identifier.MatchString(grid) {
			return grid
		}
		return ""
	}
	if x := splitArgs(dim3)[0]; oneDim(dim3) && identifier.MatchString(x) {
		return x
	}
	return ""
}

// templateListEnd is the offset of the '>' closing the template argument
// list that opens at s[open] ('<' right after a name, holding only names,
// numbers, `::`, `*`, `&`, commas and nested lists, and followed by `(`,
// `{`, `::`, `,`, `)` or the end); -1 when it is a comparison.
func templateListEnd(s string, open int) int {
	if open == 0 || !isIdentByte(s[open-1]) {
		return -1
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<':
			depth++
		case c == '>':
			if depth--; depth == 0 {
				next := strings.TrimLeft(s[i+1:], " \t\r\n")
				if next == "" || strings.ContainsAny(next[:1], "({,)") || strings.HasPrefix(next, "::") {
					return i
				}
				return -1
			}
		case isIdentByte(c) || strings.IndexByte(" \t\r\n,:*&", c) >= 0:
		default:
			return -1
		}
	}
	return -1
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
