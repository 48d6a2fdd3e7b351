package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// plan is the manifest being written: each part with the comment that
// says what was guessed.
type plan struct {
	name, lang, rel, from string
	includeDirs           []string // folders above the source's that its includes name paths from
	dtypeName             string   // "" → T
	dtypeNameComment      string   // why the dtype has that name
	dtypes, dtypesNote    string
	checkComment          string
	knobs, dims, values   []part
	flags                 []part
	constants             []part // Metal function constants the entries read: name → the flag or knob
	rules                 []part // body: the rule's expression
	bufs                  []*buffer
	symbolNotes           []string // comment lines after the buffers: host-filled globals that got none
	disps                 []*dispatch
	taken                 map[string]string // name → what it is (knob, dim, value, flag, buffer)
	notes                 []note            // the summary on stderr
	lines                 sourceLines       // where each line of the text read comes from
	structParams          []string          // CUDA structs taken by value, whose fields new does not fill
}

// part is one knob, dim, value or flag line: `name: body   # comment`.
type part struct{ name, body, comment string }

type buffer struct {
	name, dtype, init, role string
	shape                   []string
	readOnlyUse             bool     // bound to a const pointer somewhere
	symbol                  string   // "true" or the global's C++ name: fills a module global (symbols.go)
	lanes                   []string // a vector or matrix pointee's last extents (vectorType), after the guessed shape
	lanesWhat               string   // "float4 has 4 lanes"
	rank                    int      // a PyTorch packed accessor's: the shape has that many extents
	// its comment's parts, in this order: what bounds an index input,
	// how mltop read its use (in, out, inout), where its shape is from
	index, how, shapeComment string
}

// comment is the buffer line's comment: its non-empty parts.
func (b *buffer) comment() string {
	var parts []string
	for _, s := range []string{b.index, b.how, b.shapeComment} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

type dispatch struct {
	entry, comment string
	grid, threads  []string
	args           []string
	tgm            []string
	dynamic        []string // extern shared arrays: sized by dynamic_tgm
	dynamicComment string   // the commented dynamic_tgm line's TODO
	entryComment   string
	argsComment    string
	threadsComment string
	gridComment    string
	cooperative    string // why the dispatch is `cooperative: true` ("" when it is not)
}

// claim reserves name for a part of kind; a name already taken by
// another kind gets a suffix. The same name and kind is shared (a dim
// that two kernels take).
func (p *plan) claim(name, kind string) (string, bool) {
	if prev, ok := p.taken[name]; ok {
		if prev == kind && kind != "buffer" {
			return name, false
		}
		for k := 2; ; k++ {
			n := fmt.Sprintf("%s_%d", name, k)
			if _, used := p.taken[n]; !used {
				name = n
				break
			}
		}
	}
	p.taken[name] = kind
	return name, true
}

// note is one line of the summary and the TODO comment it has in the
// manifest, on the line it is about.
type note struct{ text, todo string }

// todo adds a note to the summary and returns its comment, "TODO: "+short,
// for the manifest line the note is about: the only way to add a note, so
// that each one's TODO is in the file (TestEveryNoteHasItsTODO).
func (p *plan) todo(short, format string, a ...any) string {
	short = oneLine(short)
	p.notes = append(p.notes, note{text: oneLine(fmt.Sprintf(format, a...)), todo: short})
	return "TODO: " + short
}

// dropNote removes the notes whose TODO a comment being replaced held.
func (p *plan) dropNote(comment string) {
	p.notes = slices.DeleteFunc(p.notes, func(n note) bool { return strings.HasPrefix(comment, "TODO: "+n.todo) })
}

// withTODO adds a TODO to a comment that may have other parts.
func withTODO(comment, todo string) string {
	if comment == "" {
		return todo
	}
	return comment + "; " + todo
}

func withComment(line, comment string) string {
	if comment == "" {
		return line
	}
	return line + "   # " + oneLine(comment)
}

// lineBreaks is a line break with the indentation around it, and the
// parenthesis it follows or precedes.
var lineBreaks = regexp.MustCompile(`(\(?)[ \t\r]*\n\s*(\)?)`)

// oneLine joins the lines of a comment that quotes the source (a launch's
// `dim3 grid(std::min(` with its arguments on the next lines): a YAML
// comment ends at the line's end, and the next line would be read as YAML.
// A break after "(" or before ")" goes; any other is one space.
func oneLine(s string) string {
	return lineBreaks.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "(") || strings.HasSuffix(m, ")") {
			return strings.TrimSpace(m)
		}
		return " "
	})
}

// quote writes an expression as a YAML scalar: quoted unless it is a
// plain name or number.
func quote(s string) string {
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

func quoteAll(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = quote(x)
		if strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[") { // a struct's mapping (structMapping) or an array value (arrayArg), written as YAML already
			out[i] = x
		}
	}
	return strings.Join(out, ", ")
}

// render writes the manifest's YAML.
func (p *plan) render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `mltop new` from %s. It loads as it is; fill in the TODOs (keys: docs/own-kernels.md).\n", p.from)
	fmt.Fprintf(&b, "name: %s\ndescription: TODO one line\n", p.name)
	fmt.Fprintf(&b, "sources: {%s: %s}\n", p.lang, quote(p.rel))
	if len(p.includeDirs) > 0 {
		var q []string
		for _, d := range p.includeDirs {
			q = append(q, quote(d))
		}
		fmt.Fprintf(&b, "include_dirs: [%s]   # the source includes headers by paths from there\n", strings.Join(q, ", "))
	}
	if p.dtypeName != "" && p.dtypeName != "T" {
		b.WriteString(withComment("dtype_name: "+p.dtypeName, p.dtypeNameComment) + "\n")
	}
	b.WriteString(withComment("dtypes: "+p.dtypes, p.dtypesNote) + "\n")
	section := func(key string, parts []part) {
		if len(parts) == 0 {
			fmt.Fprintf(&b, "%s: {}\n", key)
			return
		}
		b.WriteString(key + ":\n")
		for _, x := range parts {
			b.WriteString(withComment(fmt.Sprintf("  %s: %s", x.name, x.body), x.comment) + "\n")
		}
	}
	section("knobs", p.knobs)
	section("dims", p.dims)
	if len(p.values) > 0 {
		section("values", p.values)
	}
	section("flags", p.flags)
	if len(p.constants) > 0 {
		section("constants", p.constants)
	}
	if len(p.rules) == 0 {
		b.WriteString("rules: []\n")
	} else {
		b.WriteString("rules:\n")
		for _, r := range p.rules {
			b.WriteString(withComment(fmt.Sprintf("  - %q", r.body), r.comment) + "\n")
		}
	}
	b.WriteString("buffers:\n")
	for _, x := range p.bufs {
		line := "  - {name: " + x.name
		if x.symbol != "" {
			line += ", symbol: " + quote(x.symbol)
		}
		line += fmt.Sprintf(", dtype: %s, shape: [%s]", x.dtype, quoteAll(x.shape))
		if x.init != "" {
			line += fmt.Sprintf(", init: %q", x.init)
		}
		if x.role != "" {
			line += ", " + x.role + ": true"
		}
		b.WriteString(withComment(line+"}", x.comment()) + "\n")
	}
	for _, n := range p.symbolNotes {
		b.WriteString("  # " + oneLine(n) + "\n")
	}
	b.WriteString("dispatches:\n")
	for _, d := range p.disps {
		if d.comment != "" {
			b.WriteString("  # " + oneLine(d.comment) + "\n")
		}
		b.WriteString(withComment("  - entry: "+quote(d.entry), d.entryComment) + "\n")
		b.WriteString(withComment(fmt.Sprintf("    grid: [%s]", quoteAll(d.grid)), d.gridComment) + "\n")
		b.WriteString(withComment(fmt.Sprintf("    threads: [%s]", quoteAll(d.threads)), d.threadsComment) + "\n")
		b.WriteString(withComment(fmt.Sprintf("    args: [%s]", quoteAll(d.args)), d.argsComment) + "\n")
		if d.cooperative != "" {
			b.WriteString(withComment("    cooperative: true", d.cooperative) + "\n")
		}
		if len(d.dynamic) > 0 {
			// commented: it loads as it is, and `mltop check` flags the
			// extern array until the line is filled in
			fmt.Fprintf(&b, "    # dynamic_tgm: \"TODO\"   # %s\n", oneLine(d.dynamicComment))
		}
		if len(d.tgm) > 0 {
			b.WriteString("    tgm:   # from the source's static shared (threadgroup) arrays: the TGM budget\n")
			for _, t := range d.tgm {
				b.WriteString("      " + t + "\n")
			}
		}
	}
	// No bytes: every buffer counts once; flops has no guess.
	b.WriteString("# work: {flops: \"TODO\"}   # TODO: FLOPs of one run (an expression of dims and knobs); bytes: leave out to count every buffer once\n")
	b.WriteString(withComment("check: none", p.checkComment) + "\n")
	return b.String()
}
