package scaffold

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// withPack is the parameters k binds with its parameter pack (`ArgTypes...
// args`) expanded into one parameter per type its launch names for it,
// each named after the launch's argument in that place when it is a name
// (`a`, `b`, `mode`), else after the pack (`args_2`). A pack no launch
// names the types of stays unexpanded: an empty pack, with a TODO.
func (c *context) withPack(p *plan, k *kernelScan) []csrc.Param {
	params := k.sig.Bindable()
	at := slices.IndexFunc(params, func(q csrc.Param) bool { return strings.Contains(q.Type, ". . .") })
	if at < 0 {
		return params
	}
	pack := params[at]
	out := slices.Clone(params[:at])
	types := c.packArgs(k)
	if types == nil {
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("%s is a parameter pack: name its types in entry: and add one arg per type", pack.Name),
			"%s: parameter pack %s: no launch names its types: name them in entry: after the other template arguments, one arg each", k.sig.Entry, pack.Name))
	}
	packName := packTemplateName(pack)
	for j, t := range types {
		name := fmt.Sprintf("%s_%d", pack.Name, j)
		if lb := k.launch; lb != nil && at+j < len(lb.args) {
			if n := castName(lb.args[at+j]); identifier.MatchString(n) {
				name = n
			}
		}
		decl := strings.ReplaceAll(pack.Type, ". . .", "")
		decl = strings.TrimSpace(replaceIdent(decl, packName, t))
		sigs := csrc.FindEntries("__global__ void mltop_pack(" + decl + " " + name + ") {}")
		if len(sigs) != 1 || len(sigs[0].Params) != 1 {
			k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("the arg of %s (%s, type %d of the pack) is missing: add it", name, decl, j+1),
				"%s: parameter pack %s: mltop new cannot read its type %s: add its arg", k.sig.Entry, pack.Name, decl))
			continue
		}
		out = append(out, sigs[0].Params[0])
	}
	return append(out, params[at+1:]...)
}

// packTemplateName is the template parameter a pack parameter expands
// (ArgTypes of `ArgTypes . . .`, `const ArgTypes& . . .`).
func packTemplateName(pack csrc.Param) string {
	for _, w := range strings.Fields(strings.NewReplacer("*", " ", "&", " ").Replace(pack.Type)) {
		if w != "." && w != "const" && identifier.MatchString(w) {
			return w
		}
	}
	return ""
}

// replaceIdent replaces the identifier name in text with repl.
func replaceIdent(text, name, repl string) string {
	if name == "" {
		return text
	}
	var b strings.Builder
	for _, t := range csrc.Tokenize(text) {
		if t.Text == name {
			b.WriteString(repl + " ")
			continue
		}
		b.WriteString(t.Text + " ")
	}
	return strings.TrimSpace(b.String())
}

// castName is a launch argument with a leading cast dropped (`mode` of
// `(adamMode_t)mode`, of `static_cast<int>(mode)`), else the argument.
func castName(arg string) string {
	arg = strings.TrimSpace(arg)
	if m := staticCast.FindStringIndex(arg); m != nil && strings.HasSuffix(arg, ")") {
		return strings.TrimSpace(arg[m[1] : len(arg)-1])
	}
	if m := castPrefix.FindStringSubmatchIndex(arg); m != nil {
		return strings.TrimSpace(arg[m[3]+1:])
	}
	return arg
}
