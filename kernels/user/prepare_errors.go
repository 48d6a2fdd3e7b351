package user

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// This file traces a failed CUDA compile whose errors all lie in headers
// that are none of the source's files (the toolkit's, or a stub mltop
// serves) back to the source's #include lines that bring them in: NVRTC
// names only the header, and a program's thrust or CUB include would
// otherwise show as dozens of errors in files the user never opened.

// logErrorFile finds the file of each error in NVRTC's (rewritten) log.
var logErrorFile = regexp.MustCompile(`(?m)^([^\s:][^:\n]*):\d+: (?:catastrophic error|internal error|error)\b`)

// headerInclude finds a header's #include lines: group 1 is `<` or `"`,
// group 2 the name.
var headerInclude = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]`)

// maxTracedHeaders bounds the headers read while tracing (thrust's tree has
// a few hundred).
const maxTracedHeaders = 5000

// IncludesBehindErrors lists, for a failed CUDA compile whose log has
// errors and all of them in headers that are none of the source's files,
// the source's #include lines that bring those headers in
// ("k.cu:3: #include <thrust/device_vector.h>"), in the order of the errors;
// nil when an error lies in the source's own files or none is traced.
func (f *Family) IncludesBehindErrors(log string) []string {
	p := f.prep["cuda"]
	if p == nil {
		return nil
	}
	own := map[string]bool{}
	for _, u := range p.units {
		own[filepath.Clean(u.path)] = true
	}
	var files []string
	for _, m := range logErrorFile.FindAllStringSubmatch(log, -1) {
		if m[1] == "__nv_name_map" {
			continue
		}
		file := filepath.Clean(m[1])
		if own[file] {
			return nil
		}
		if !slices.Contains(files, file) {
			files = append(files, file)
		}
	}
	if len(files) == 0 {
		return nil
	}
	reached := p.traceSystemIncludes()
	var out []string
	for _, file := range files {
		if inc, ok := reached[file]; ok && !slices.Contains(out, inc) {
			out = append(out, inc)
		}
	}
	return out
}

// traceSystemIncludes maps every header the source's system #includes
// reach (a toolkit header by its cleaned path, a stub by its name) to the
// first of those #include lines that reaches it, breadth first from each.
func (p *prepared) traceSystemIncludes() map[string]string {
	reached := map[string]string{}
	for _, u := range p.units {
		for i, d := range u.scan.Directives {
			if d.Dead || d.Include == "" || u.local[i] != nil {
				continue
			}
			brackets := `"` + d.Include + `"`
			if d.System {
				brackets = "<" + d.Include + ">"
			}
			line := fmt.Sprintf("%s:%d: #include %s", filepath.Base(u.path), d.Line, brackets)
			queue := p.resolveHeader(d.Include, "", false)
			for len(queue) > 0 && len(reached) < maxTracedHeaders {
				h := queue[0]
				queue = queue[1:]
				if _, seen := reached[h]; seen {
					continue
				}
				reached[h] = line
				text, ok := p.stubs[h]
				if !ok {
					b, err := os.ReadFile(h)
					if err != nil {
						continue
					}
					text = string(b)
				}
				for _, m := range headerInclude.FindAllStringSubmatch(text, -1) {
					queue = append(queue, p.resolveHeader(m[2], h, m[1] == `"`)...)
				}
			}
		}
	}
	return reached
}

// resolveHeader is where NVRTC finds the header named name, included from
// header from (a path; "" for the source): a stub mltop serves under that
// name, else a quoted name beside from, else the first toolkit folder that
// has it; none when nothing has it.
func (p *prepared) resolveHeader(name, from string, quoted bool) []string {
	if _, ok := p.stubs[name]; ok {
		return []string{name}
	}
	var dirs []string
	if quoted && filepath.IsAbs(from) {
		dirs = append(dirs, filepath.Dir(from))
	}
	for _, d := range append(dirs, p.toolkit.dirs...) {
		path := filepath.Join(d, name)
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			return []string{filepath.Clean(path)}
		}
	}
	return nil
}
