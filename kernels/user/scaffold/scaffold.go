// Package scaffold writes a starting kernel.yaml for a kernel source
// (`mltop new`): whole programs with host code, several kernels, templates
// and C++ names. What it writes loads as it is; what it could not infer is
// a `# TODO` comment in the YAML and a note in the summary.
package scaffold

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// Request says what to scaffold.
type Request struct {
	Name    string   // the kernel's name in mltop
	SrcPath string   // the source as given: relative to the working directory, or absolute
	Src     string   // the source's text
	Entries []string // the kernels to dispatch, in order; none: the file's only kernel
	Dir     string   // the folder kernel.yaml goes to (relative or absolute)
	// Read reads the local headers the source includes (`#include "x"`,
	// beside the including file): their kernels, typedefs and #defines
	// count as the compiler sees them. nil: the source alone.
	Read func(path string) ([]byte, error)
}

// Result is the manifest and the summary of what was guessed: each note
// has a `# TODO` comment in Text, on the line it is about.
type Result struct {
	Text  string
	Notes []string
	todos []string // todos[i]: what follows "TODO: " in Notes[i]'s comment
}

// ChooseError: the source has several kernels and none was named.
type ChooseError struct {
	File    string
	Kernels []csrc.Signature
	lines   sourceLines
}

func (e *ChooseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s has %d kernels: pick one with --entry NAME, or several with --entry a,b (one dispatch each, in that order):", e.File, len(e.Kernels))
	for _, s := range e.Kernels {
		name := s.Qualified()
		if len(s.Template) > 0 {
			name = "template <" + strings.Join(s.Template, ", ") + "> " + name
		}
		fmt.Fprintf(&b, "\n  %s: %s  %s", e.lines.at(s.Line), name, s)
	}
	return b.String()
}

// Manifest writes a starting manifest for the request's kernels.
func Manifest(r Request) (Result, error) {
	if !user.ValidName(r.Name) {
		return Result{}, fmt.Errorf("%q is not a usable kernel name: use letters, digits and _, starting with a letter", r.Name)
	}
	var lines sourceLines
	var roots []string
	r.Src, lines, roots = withHeaders(r.SrcPath, r.Src, r.Read)
	lang, err := language(r)
	if err != nil {
		return Result{}, err
	}
	if lang == "cuda" {
		r.Src = joinLaunchChevrons(r.Src)
	}
	if lang == "metal" {
		// a kernel only a #define writes (`kernel void NAME(…)` in a
		// macro body): read the expanded text, whose lines are the source's
		if expanded, ok := metal.MacroKernelSource(r.Src, entryNames(r.Entries)); ok {
			r.Src = expanded
		}
	}
	sigs, overloads, err := pickEntries(r, lines)
	if err != nil {
		return Result{}, err
	}
	rel, err := sourcePath(r.SrcPath, r.Dir)
	if err != nil {
		return Result{}, err
	}
	c := newContext(r.Src, lang, sigs, trimmedEntries(r.Entries)...)
	p := &plan{name: r.Name, lang: lang, rel: rel, from: filepath.Base(r.SrcPath), taken: map[string]string{}, lines: lines}
	for _, root := range roots {
		d, err := sourcePath(root, r.Dir)
		if err != nil {
			return Result{}, err
		}
		p.includeDirs = append(p.includeDirs, d)
	}
	p.dtypeName, p.dtypeNameComment = c.dtypeName, c.dtypeNameWhy
	p.taken[c.dtypeName] = "the dtype"
	for i, sig := range sigs {
		d := c.addDispatch(p, sig)
		if n := overloads[i]; n > 1 {
			d.entryComment = withTODO(d.entryComment, p.todo(fmt.Sprintf("one of %d overloads (%s); edit args for another", n, lines.at(sig.Line)),
				"%s has %d overloads: used the one at %s; edit args for another", sig.Entry, n, lines.at(sig.Line)))
		}
	}
	if lang == "metal" {
		addFunctionConstants(p, r.Src, sigs)
	}
	if err := ensureOutput(p, r.SrcPath); err != nil {
		return Result{}, err
	}
	indexBelowV(p)
	c.addSymbols(p)
	c.setDTypes(p)
	p.checkComment = p.todo("{python: ref.py} with def reference(inputs, dims) -> {output: array}", "check is none (runs are `unchecked`): write ref.py and set check: {python: ref.py}")
	res := Result{Text: p.render()}
	for _, n := range p.notes {
		res.Notes = append(res.Notes, n.text)
		res.todos = append(res.todos, n.todo)
	}
	return res, nil
}

// language is the source's: by its extension, or for a header (.h,
// .hpp, .cuh) by the kernels it (or a header it includes) defines.
func language(r Request) (string, error) {
	switch strings.ToLower(filepath.Ext(r.SrcPath)) {
	case ".metal":
		return "metal", nil
	case ".cu", ".cuda":
		return "cuda", nil
	case ".cuh", ".h", ".hpp", ".hh":
		switch {
		case strings.Contains(r.Src, "__global__"):
			return "cuda", nil
		case metalKernelRE.MatchString(r.Src):
			return "metal", nil
		}
		return "", fmt.Errorf("%s: a header with no __global__ (CUDA) or kernel (Metal) function: give the .cu or .metal file that includes the kernel's header (mltop new reads the local headers it includes)", r.SrcPath)
	}
	return "", fmt.Errorf("%s: want a .cu or .metal file (or a .cuh/.h header that defines the kernel)", r.SrcPath)
}

var metalKernelRE = regexp.MustCompile(`\[\[\s*kernel\s*\]\]|\bkernel\s+void\b`)

// pickEntries finds the named kernels (or the only one) in the source,
// with the number of overloads of each name (the first is taken).
func pickEntries(r Request, lines sourceLines) ([]csrc.Signature, []int, error) {
	all := csrc.FindEntries(r.Src)
	if len(all) == 0 {
		msg := fmt.Sprintf("%s has no kernels: mltop looks for __global__ (CUDA) and kernel / [[kernel]] (Metal) functions", r.SrcPath)
		if unread := unreadIncludes(r.Src); len(unread) > 0 {
			// FasterTransformer's .cu files include their kernels' headers
			// by paths under an include directory, not beside them
			which := "one of those headers"
			if len(unread) == 1 {
				which = "that header"
			}
			msg += fmt.Sprintf(" in it and in the headers it includes from its own folder; it also includes %s, not found there: the kernels may be in %s (reached through include_dirs): pass --from that header",
				strings.Join(unread, ", "), which)
		}
		return nil, nil, errors.New(msg)
	}
	if len(r.Entries) == 0 {
		if len(all) > 1 {
			return nil, nil, &ChooseError{File: r.SrcPath, Kernels: all, lines: lines}
		}
		return all, []int{1}, nil
	}
	var out []csrc.Signature
	var overloads []int
	for _, name := range r.Entries {
		name = strings.TrimSpace(name)
		if i := strings.Index(name, "<"); i >= 0 {
			name = strings.TrimSpace(name[:i]) // the template arguments are the scaffold's to write
		}
		sigs, found := csrc.Overloads(r.Src, name)
		if len(sigs) == 0 {
			if inst, ok := metalHostName(r.Src, name); ok { // a Metal [[host_name]] instance: its template
				sigs, _ = csrc.Overloads(r.Src, inst.Template)
			}
		}
		if len(sigs) == 0 {
			return nil, nil, fmt.Errorf("%s has no kernel %q (kernels found: %s)", r.SrcPath, name, strings.Join(found, ", "))
		}
		out = append(out, sigs[0])
		overloads = append(overloads, len(sigs))
	}
	return out, overloads, nil
}

// unreadIncludes are the local headers (#include "x") that the joined
// source still includes: withLocalHeaders did not find them beside the
// file that includes them.
func unreadIncludes(src string) []string {
	var out []string
	for _, d := range csrc.ScanIn(src, csrc.HostMacros()).Directives {
		if d.Include != "" && !d.System && !d.Dead && !slices.Contains(out, d.Include) {
			out = append(out, d.Include)
		}
	}
	return out
}

// sourcePath is the source's path relative to the manifest's folder, with
// either given relative to the working directory or absolute.
func sourcePath(src, dir string) (string, error) {
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return "", fmt.Errorf("--from %s: %v", src, err)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("-o %s: %v", dir, err)
	}
	rel, err := filepath.Rel(absDir, absSrc)
	if err != nil {
		return filepath.ToSlash(absSrc), nil
	}
	return filepath.ToSlash(rel), nil
}

// ensureOutput makes sure one buffer is checked: a source whose kernels
// only read (through non-const pointers) gets its last such buffer marked
// out; one with only const pointers cannot be scaffolded.
func ensureOutput(p *plan, file string) error {
	if len(p.bufs) == 0 && len(p.structParams) > 0 {
		return fmt.Errorf("%s: %s, and no pointer parameter: write kernel.yaml by hand, giving that arg as a mapping of the fields, pointers to buffers (args: [{x: x, n: N}]; docs/own-kernels.md, \"A struct taken by value\")", file, strings.Join(p.structParams, "; "))
	}
	if len(p.bufs) == 0 {
		return fmt.Errorf("%s: the kernels have no pointer parameters: a kernel needs at least one buffer to write", file)
	}
	for _, b := range p.bufs {
		if b.role != "" && b.role != "scratch" {
			return nil
		}
	}
	for i := len(p.bufs) - 1; i >= 0; i-- {
		if b := p.bufs[i]; !b.readOnlyUse && b.role != "scratch" {
			b.role, b.init = "out", ""
			p.dropNote(b.how) // it said the buffer is an input
			b.how = p.todo("no buffer is written in a way mltop could follow; guessed this one is the output", "no buffer is visibly written: guessed %s is the output", b.name)
			return nil
		}
	}
	return fmt.Errorf("%s: every pointer parameter is const: mltop checks what a kernel writes, and these kernels write through none of their parameters", file)
}

// entryNames are the request's kernel names, template arguments dropped.
func entryNames(entries []string) []string {
	var out []string
	for _, n := range entries {
		n, _, _ = strings.Cut(n, "<")
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// trimmedEntries are the request's entry names without blanks.
func trimmedEntries(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, strings.TrimSpace(n))
	}
	return out
}
