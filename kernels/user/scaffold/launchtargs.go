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

// launchTemplate is what the host launches of a template kernel pass as
// its template arguments (`kern<scalar_t, float><<<grid, block>>>(…)`).
type launchTemplate struct {
	args []string // the first launch's arguments, as written
	line int
	// others are the other launches that pass different arguments (a
	// dispatch switch), as "<args> at line N" with the source's line
	others []launchAt
	// fixed are the type parameters the first launch gives a fixed C type
	// (`float`, `int8_t`): buffers and scalars of that type take it, not the dtype
	fixed map[string]string
	// all are every launch read, the first included (a macro's launch once
	// per use of the macro)
	all []launchSeen
	// values are, by template parameter, the integer literals a dispatch
	// switch's launches pass there, sorted, when the launches differ in
	// such literals only (foldSwitch): one knob of those values, no others
	values map[int][]int
	// instances: made of a Metal source's [[host_name]] instantiations
	// (hostNameTemplates), not of launches
	instances bool
	// threadsAt says, by such a parameter, that each launch's thread count
	// is the literal it passes there (`case 256: k<T, 256><<<g, 256>>>`)
	threadsAt map[int]bool
	// via is the launch through a local function-pointer variable that
	// args come from (fnptr.go), nil when a launch names the entry
	via *pointerLaunch
}

type launchAt struct {
	args string
	line int
}

// launchSeen is one launch's template arguments and thread count (the
// second <<<…>>> argument, "" when not read), as written.
type launchSeen struct {
	args  []string
	block string
	line  int
	// blockArg is the template argument that the launch as written names
	// as its thread count too (a macro's `k<T, B><<<g, B>>>`), -1 when none
	blockArg int
}

// launchTemplates reads the template arguments of the source's launches of
// entry (`apply<Lists<4>, Functor<float>, float><<<…>>>`: nested ones
// kept whole); false when no launch passes any.
func launchTemplates(src, entry string) (launchTemplate, bool) {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(entry) + `\s*<`)
	var lt launchTemplate
	seen := map[string]bool{}
	for _, m := range re.FindAllStringIndex(src, -1) {
		lineStart := strings.LastIndex(src[:m[0]], "\n") + 1
		if strings.HasPrefix(strings.TrimSpace(src[lineStart:m[0]]), "//") {
			continue
		}
		end := closingAngle(src, m[1]-1)
		rest := strings.TrimLeft(src[end+1:], " \t\r\n")
		if end < 0 || !strings.HasPrefix(rest, "<<<") {
			continue
		}
		l := launchSeen{args: splitArgs(strings.Join(strings.Fields(unsplice(src[m[1]:end])), " ")), line: strings.Count(src[:m[0]], "\n") + 1, blockArg: -1}
		l.args = callerTemplateArgs(src, m[0], l.args)
		if close := strings.Index(rest, ">>>"); close > 0 {
			if config := splitArgs(unsplice(rest[3:close])); len(config) >= 2 {
				l.block = strings.Join(strings.Fields(config[1]), " ")
			}
		}
		if identifier.MatchString(l.block) {
			l.blockArg = slices.Index(l.args, l.block)
		}
		var uses []launchSeen
		for _, u := range macroUses(src, m[0], l) {
			uses = append(uses, caseConstants(src, u)...)
		}
		for _, l := range uses {
			key := strings.Join(l.args, ", ")
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			lt.all = append(lt.all, l)
			if lt.args == nil {
				lt.args, lt.line = l.args, l.line
				continue
			}
			lt.others = append(lt.others, launchAt{args: key, line: l.line})
		}
	}
	if lt.args == nil {
		lt.addPointerLaunches(src, entry, seen)
	}
	return lt, lt.args != nil
}

// signedLiteral is a template argument a switch's launches may pass as a
// knob's value: Marlin's group_blocks is -1 (one scale per column) or 8.
var signedLiteral = regexp.MustCompile(`^-?\d+$`)

// spliced is a backslash that ends a line: a macro's body goes on.
var spliced = regexp.MustCompile(`\\[ \t]*\r?\n`)

// unsplice is text of a macro's body as the preprocessor reads it, its
// line splices spaces (Marlin's CALL_IF writes `Marlin< \` and `THREADS,
// …, GROUP_BLOCKS \` on lines of their own).
func unsplice(text string) string { return spliced.ReplaceAllString(text, " ") }

// macroUses are the launches a function-like macro makes (`#define
// LAUNCH(BS) k<T, BS><<<g, BS>>>(…)`) when the launch at off is in one:
// one per use of the macro (`case 256: LAUNCH(256); break;`), its
// parameters replaced by the use's arguments. The launch itself when it
// is in no macro or the source uses that macro nowhere.
func macroUses(src string, off int, l launchSeen) []launchSeen {
	name, params, from, to := defineAround(src, off)
	if name == "" {
		return []launchSeen{l}
	}
	var out []launchSeen
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*\(`)
	for _, m := range re.FindAllStringIndex(src, -1) {
		lineStart := strings.LastIndex(src[:m[0]], "\n") + 1
		if m[0] >= from && m[0] < to || strings.HasPrefix(strings.TrimSpace(src[lineStart:m[0]]), "//") {
			continue
		}
		uses := callArgs(src[m[1]-1:])
		if len(uses) != len(params) {
			continue
		}
		expand := func(s string) string {
			for i, prm := range params {
				s = regexp.MustCompile(`\b`+regexp.QuoteMeta(prm)+`\b`).ReplaceAllLiteralString(s, strings.Join(strings.Fields(uses[i]), " "))
			}
			return s
		}
		u := launchSeen{block: expand(l.block), line: strings.Count(src[:m[0]], "\n") + 1, blockArg: l.blockArg}
		for _, a := range l.args {
			u.args = append(u.args, expand(a))
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return []launchSeen{l}
	}
	return out
}

// caseConstants are the launches of a dispatch that sets a local constant
// per case (`case 256: { constexpr int kBlock = 256; k<T, kBlock><<<g,
// kBlock>>>(…); }`, or such a case in a dispatch macro whose last
// argument is the launch): when a template argument of l is a name the
// source gives two or more different values that way, one launch per
// value, the name replaced by it. l itself otherwise.
func caseConstants(src string, l launchSeen) []launchSeen {
	for i, a := range l.args {
		if !identifier.MatchString(a) {
			continue
		}
		re := regexp.MustCompile(`\b(?:constexpr|const)\s+(?:static\s+)?(?:int|unsigned|unsigned\s+int|size_t|uint32_t|int32_t|int64_t)\s+` + regexp.QuoteMeta(a) + `\s*=\s*(\d+)\s*;`)
		var out []launchSeen
		seen := map[string]bool{}
		for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
			v := src[m[2]:m[3]]
			if seen[v] {
				continue
			}
			seen[v] = true
			u := l
			u.args = slices.Clone(l.args)
			u.args[i] = v
			if u.block == a {
				u.block = v
			}
			u.line = strings.Count(src[:m[0]], "\n") + 1
			out = append(out, u)
		}
		if len(out) >= 2 {
			return out
		}
	}
	return []launchSeen{l}
}

var defineHead = regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_]\w*)\(([^)]*)\)`)

// defineAround is the function-like #define whose body (continued lines
// included) holds offset off: its name, parameters and the offsets its
// text spans. "" when off is in none.
func defineAround(src string, off int) (name string, params []string, from, to int) {
	from = strings.LastIndex(src[:off], "\n") + 1
	for from > 1 && strings.HasSuffix(strings.TrimRight(src[:from-1], " \t\r"), "\\") {
		from = strings.LastIndex(src[:from-1], "\n") + 1
	}
	m := defineHead.FindStringSubmatch(src[from:])
	if m == nil {
		return "", nil, 0, 0
	}
	to = off
	for {
		nl := strings.IndexByte(src[to:], '\n')
		if nl < 0 {
			to = len(src)
			break
		}
		if !strings.HasSuffix(strings.TrimRight(src[to:to+nl], " \t\r"), "\\") {
			to += nl
			break
		}
		to += nl + 1
	}
	for _, p := range strings.Split(m[2], ",") {
		params = append(params, strings.TrimSpace(p))
	}
	return m[1], params, from, to
}

// foldSwitch makes the launches of a dispatch switch (or if/else chain,
// or a macro's uses) that differ only in integer literals they pass as
// value template parameters one entry: values lists the literals by
// parameter and the others are dropped. Nothing changes when the
// launches differ in anything else (a type, a constant, an expression):
// the entry takes the first, the others stay in its TODO.
func (lt *launchTemplate) foldSwitch(tmpl []tparam) {
	lt.threadsAt = threadsFromTArgs(lt.all, tmpl)
	if len(lt.all) < 2 {
		return
	}
	values := map[int][]int{}
	for i, a := range lt.args {
		differ := false
		for _, l := range lt.all {
			if len(l.args) != len(lt.args) {
				return
			}
			differ = differ || l.args[i] != a
		}
		if !differ {
			continue
		}
		if i >= len(tmpl) || tmpl[i].isType || tmpl[i].pack {
			return
		}
		for _, l := range lt.all {
			v, err := strconv.Atoi(l.args[i])
			if err != nil || !signedLiteral.MatchString(l.args[i]) {
				return
			}
			if !slices.Contains(values[i], v) {
				values[i] = append(values[i], v)
			}
		}
		slices.Sort(values[i])
	}
	if len(values) == 0 {
		return
	}
	lt.values, lt.others = values, nil
}

// threadsFromTArgs are the value template parameters that are each
// launch's thread count: a macro's launch names one parameter in both
// places (`k<T, B><<<g, B>>>` used as LAUNCH(256)), or several launches
// each pass as their block the integer literal they pass there (`case
// 256: k<T, 256><<<g, 256>>>`). One launch of a literal in both places
// says too little (the grid's literal may be either: ambiguousLiteral).
func threadsFromTArgs(all []launchSeen, tmpl []tparam) map[int]bool {
	at := map[int]bool{}
	for i, tp := range tmpl {
		if tp.isType || tp.pack || len(all) == 0 {
			continue
		}
		named, literal := true, len(all) > 1
		for _, l := range all {
			named = named && l.blockArg == i
			literal = literal && i < len(l.args) && intLiteral.MatchString(l.args[i]) && l.block == l.args[i]
		}
		at[i] = named || literal
	}
	return at
}

// closingAngle is the offset of the '>' that closes the '<' at open, ""
// nesting counted; -1 when a ';' or '{' comes first.
func closingAngle(src string, open int) int {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '<', '(':
			depth++
		case '>', ')':
			if depth--; depth == 0 {
				return i
			}
		case ';', '{', '}':
			return -1
		}
	}
	return -1
}

// fixedCType says whether a launch's template argument is a C type of its
// own (float, int8_t, __half) rather than the type the dtype stands for
// (scalar_t, T, a dispatch macro's type).
func fixedCType(arg string) bool {
	return cTypes[strings.Join(strings.Fields(arg), " ")] != ""
}

// readLaunchTemplates reads each kernel's launch template arguments (or,
// from a launch that leaves them to deduction, its arguments' types) and
// gives the type parameters a launch fixes to a C type that type in the
// kernel's parameters (sigs are changed in place), so that a `float*`
// scale buffer stays f32 whatever the dtype.
func (c *context) readLaunchTemplates(sigs []csrc.Signature) {
	c.launchTArgs = map[string]*launchTemplate{}
	for i, sig := range sigs {
		tmpl := templateOf(c.toks, entryAt(c.toks, sig))
		lt, ok := launchTemplates(c.src, sig.Entry)
		if !ok {
			lt, ok = c.deducedTemplates(sig, tmpl)
		}
		if !ok && c.lang == "metal" {
			lt, ok = c.hostNameTemplates(sig, tmpl)
		}
		if !ok {
			continue
		}
		lt.foldSwitch(tmpl)
		lt.fixed = map[string]string{}
		for j, tp := range tmpl {
			if j < len(lt.args) && tp.isType && !tp.pack && (fixedCType(lt.args[j]) || c.sourceStruct(lt.args[j]) || lt.instances && !isTemplateParam(lt.args[j], tmpl)) {
				lt.fixed[tp.name] = strings.Join(strings.Fields(lt.args[j]), " ")
			}
		}
		sigs[i] = withTypes(sig, lt.fixed)
		c.launchTArgs[sigKey(sig)] = &lt
	}
}

// isTemplateParam says whether a template argument is one of tmpl's own
// parameters (a [[host_name]] instance's argument that follows the dtype
// is written so: hostNameTemplates).
func isTemplateParam(arg string, tmpl []tparam) bool {
	for _, tp := range tmpl {
		if tp.name == arg {
			return true
		}
	}
	return false
}

func sigKey(sig csrc.Signature) string {
	return fmt.Sprintf("%s:%d", sig.Qualified(), sig.Line)
}

// withTypes is sig with the type names of its parameters replaced as
// types says.
func withTypes(sig csrc.Signature, types map[string]string) csrc.Signature {
	if len(types) == 0 {
		return sig
	}
	params := make([]csrc.Param, len(sig.Params))
	for i, p := range sig.Params {
		for from, to := range types {
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(from) + `\b`)
			p.Type = word.ReplaceAllString(p.Type, to)
			p.Pointee = word.ReplaceAllString(p.Pointee, to)
			p.Scalar = word.ReplaceAllString(p.Scalar, to)
		}
		params[i] = p
	}
	sig.Params = params
	return sig
}

// launchTArg is the entry's template argument for template parameter i of
// kernel k as its launch passes it: a fixed C type as itself; an integer
// literal, or a constant of the source, as a knob of that one value
// (named after the parameter); a bool literal as itself. "" when the
// launch passes none or one the scaffold maps as before (the dtype's
// name, a name of the launching function).
func (c *context) launchTArg(p *plan, k *kernelScan, i int) string {
	lt := c.launchTArgs[sigKey(k.sig)]
	if lt == nil || i >= len(lt.args) {
		return ""
	}
	tp, arg := k.tmpl[i], lt.args[i]
	if tp.isType {
		return lt.fixed[tp.name]
	}
	if arg == "true" || arg == "false" {
		return arg
	}
	if tp.fn && nameRE.MatchString(arg) {
		return arg // a function (ggml's dequantize_q4_0) stays as written
	}
	v, err := strconv.Atoi(arg)
	what, constName := fmt.Sprintf("%d", v), ""
	if err != nil {
		cn, ok := constantNamed(c.src, arg)
		if !ok {
			return ""
		}
		v, what, constName = cn.value, fmt.Sprintf("%s (%s at %s)", cn.name, cn.what, p.lines.at(cn.line)), cn.name
	}
	n, isNew := p.claim(safeName(tp.name, c.dtypeName), "knob")
	k.targKnobs = append(k.targKnobs, targKnob{knob: n, value: v, constant: constName, swept: lt.values[i] != nil})
	if lt.threadsAt[i] && p.taken[n] == "knob" {
		k.block = n
	}
	if isNew {
		doc := ""
		if blockLike.MatchString(tp.name) || lt.threadsAt[i] {
			doc = ", doc: threads per group"
		}
		if vals := lt.values[i]; vals != nil {
			comment := fmt.Sprintf("the values the launches at %s pass (the default: the first's)", c.launchLines(p, lt))
			if lt.instances {
				comment = fmt.Sprintf("the values of its [[host_name]] instances at %s (the default: the one at %s)", c.launchLines(p, lt), p.lines.at(lt.line))
			}
			if lt.via != nil {
				comment = p.todo(fmt.Sprintf("%s, returning %s<%s> for these values (%s); the default is the first: set it to the one your shapes pick, or add a rule", lt.via.describe(p), k.sig.Entry, tp.name, lt.instLines(p)),
					"template parameter %s of %s: %s: knob %s takes the values it may return (%s), default %d; set the default to the one your shapes pick", tp.name, k.sig.Entry, lt.via.describe(p), n, intList(vals), v)
			}
			p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: %s, default: %d%s}", intList(vals), v, doc), comment: comment})
			return n
		}
		passes := fmt.Sprintf("the launch at %s passes %s", p.lines.at(lt.line), what)
		if lt.via != nil {
			passes = fmt.Sprintf("%s, returning the instantiation at %s with %s", lt.via.describe(p), p.lines.at(lt.line), what)
		}
		comment := p.todo(fmt.Sprintf("%s; list other values to sweep if the kernel allows them", passes),
			"template parameter %s of %s: %s: knob %s has that one value; list others to sweep if the kernel allows them", tp.name, k.sig.Entry, passes, n)
		p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: [%d], default: %d%s}", v, v, doc), comment: comment})
	}
	return n
}

// launchLines are the lines of a kernel's launches: "lines 15, 16, 17"
// (or "line 15 of k.h, line 16 of k.h" for a header's).
func (c *context) launchLines(p *plan, lt *launchTemplate) string {
	var at []string
	for _, l := range lt.all {
		at = append(at, p.lines.at(l.line))
	}
	joined := strings.Join(at, ", ")
	if !strings.Contains(joined, " of ") {
		joined = "lines " + strings.ReplaceAll(joined, "line ", "")
	}
	return joined
}

// otherLaunchesTODO is the entry line's TODO naming the launches that pass
// other template arguments than the one the entry takes; "" when none do.
func (c *context) otherLaunchesTODO(p *plan, k *kernelScan) string {
	lt := c.launchTArgs[sigKey(k.sig)]
	if lt == nil || len(lt.others) == 0 {
		return ""
	}
	var others []string
	for _, o := range lt.others {
		others = append(others, fmt.Sprintf("<%s> at %s", o.args, p.lines.at(o.line)))
	}
	list := strings.Join(others, ", ")
	return p.todo(fmt.Sprintf("from the launch at %s; the source also launches it as %s: add a dispatch for each you want", p.lines.at(lt.line), list),
		"%s: the entry takes the template arguments of the launch at %s (<%s>); the source also launches it as %s", k.sig.Entry, p.lines.at(lt.line), strings.Join(lt.args, ", "), list)
}

// launchFixed is the C type a launch of sig passes for its type parameter
// name; "" when it passes none.
func (c *context) launchFixed(sig csrc.Signature, name string) string {
	if lt := c.launchTArgs[sigKey(sig)]; lt != nil {
		return lt.fixed[name]
	}
	return ""
}

// launchGivesDType says whether a launch of k passes type parameter i a
// type that is not a fixed C type: the type the dtype stands for.
func (c *context) launchGivesDType(k *kernelScan, i int) bool {
	lt := c.launchTArgs[sigKey(k.sig)]
	return lt != nil && i < len(lt.args) && k.tmpl[i].isType && lt.fixed[k.tmpl[i].name] == ""
}

// groupCountName matches the names programs give a count of groups they
// compute from the sizes (`blocks = ceil_div(N, 256)`): not an extent of
// its own, so no dim.
var groupCountName = regexp.MustCompile(`(?i)block|grid|group|cta`)

// gridDim makes the name a kernel's launch grid is (`<<<tokens, 256>>>`,
// `dim3 grid(num_tokens)`) a dim of that name, the number of groups; ""
// when the grid is no such name, a constant of the source, one of CUDA's
// own names, or a count of groups by its name (groupCountName).
func (c *context) gridDim(p *plan, k *kernelScan) string {
	if k.launch == nil || k.launch.gridName == "" {
		return ""
	}
	name := k.launch.gridName
	if _, isConst := constantNamed(c.src, name); isConst || user.CUDABuiltin(name) || groupCountName.MatchString(name) {
		return ""
	}
	if kind := p.taken[name]; kind != "" && kind != "dim" {
		return ""
	}
	n, isNew := p.claim(name, "dim")
	if isNew {
		comment := p.todo(fmt.Sprintf("the number of groups the launch at %s uses (%s): default and range", p.lines.at(k.launch.line), name),
			"%s: its launch at %s has grid %s: dim %s is the number of groups; set its default and range", k.sig.Entry, p.lines.at(k.launch.line), name, n)
		p.dims = append(p.dims, part{name: n, body: "{default: 1024, min: 1}", comment: comment})
	}
	return n
}

// sourceStruct says whether a launch's template argument is a struct (or
// a class template's instance) the source defines: the entry takes it as
// written (`Lists<4>`, `Functor<float>`).
func (c *context) sourceStruct(arg string) bool {
	name, _, _ := strings.Cut(arg, "<")
	_, found, _ := csrc.FindStruct(c.src, strings.TrimSpace(name))
	return found
}

// packArgs are the template arguments a launch of k passes for its
// parameter pack, as written (`float, float, mode_t`); nil when k has no
// pack or no launch passes template arguments.
func (c *context) packArgs(k *kernelScan) []string {
	lt := c.launchTArgs[sigKey(k.sig)]
	for i, tp := range k.tmpl {
		if tp.pack && lt != nil && i < len(lt.args) {
			return lt.args[i:]
		}
	}
	return nil
}
