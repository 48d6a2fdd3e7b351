package scaffold

import (
	"fmt"
	"regexp"
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
}

type launchAt struct {
	args string
	line int
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
		if end < 0 || !strings.HasPrefix(strings.TrimLeft(src[end+1:], " \t\r\n"), "<<<") {
			continue
		}
		args := splitArgs(strings.Join(strings.Fields(src[m[1]:end]), " "))
		key := strings.Join(args, ", ")
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		line := strings.Count(src[:m[0]], "\n") + 1
		if lt.args == nil {
			lt.args, lt.line = args, line
			continue
		}
		lt.others = append(lt.others, launchAt{args: key, line: line})
	}
	return lt, lt.args != nil
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
		if !ok {
			continue
		}
		lt.fixed = map[string]string{}
		for j, tp := range tmpl {
			if j < len(lt.args) && tp.isType && !tp.pack && (fixedCType(lt.args[j]) || c.sourceStruct(lt.args[j])) {
				lt.fixed[tp.name] = strings.Join(strings.Fields(lt.args[j]), " ")
			}
		}
		sigs[i] = withTypes(sig, lt.fixed)
		c.launchTArgs[sigKey(sig)] = &lt
	}
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
	k.targKnobs = append(k.targKnobs, targKnob{knob: n, value: v, constant: constName})
	if isNew {
		doc := ""
		if blockLike.MatchString(tp.name) {
			doc = ", doc: threads per group"
		}
		comment := p.todo(fmt.Sprintf("the launch at %s passes %s; list other values to sweep if the kernel allows them", p.lines.at(lt.line), what),
			"template parameter %s of %s: its launch at %s passes %s: knob %s has that one value; list others to sweep if the kernel allows them", tp.name, k.sig.Entry, p.lines.at(lt.line), what, n)
		p.knobs = append(p.knobs, part{name: n, body: fmt.Sprintf("{values: [%d], default: %d%s}", v, v, doc), comment: comment})
	}
	return n
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
