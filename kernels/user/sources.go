package user

import (
	"path/filepath"
	"slices"
)

// sources reads the sources and the manifest's includes (the headers the
// sources include are found and scanned later, in prepare).
func (bl *builder) sources() error {
	f, m, d, read := bl.f, bl.m, bl.d, bl.read
	if len(m.Sources) == 0 && m.MLX == nil {
		return d.err("$", "sources", "no sources: add `sources: {cuda: kernel.cu}` and/or `metal: kernel.metal`")
	}
	f.src = map[string]source{}
	for _, lang := range slices.Sorted(mapsKeys(m.Sources)) {
		if lang != "cuda" && lang != "metal" {
			return d.err("$.sources."+lang, "sources."+lang, "unknown source language %q: use cuda or metal", lang)
		}
		p := filepath.Join(f.dir, m.Sources[lang])
		b, err := read(p)
		if err != nil {
			return d.err("$.sources."+lang, "sources."+lang, "cannot read %s: %v: the path is relative to the manifest's folder", p, unwrapPath(err))
		}
		f.src[lang] = source{path: p, code: sourceText(b), language: lang}
	}
	f.includes = map[string]string{}
	for i, inc := range m.Includes {
		p := filepath.Join(f.dir, inc)
		b, err := read(p)
		if err != nil {
			path, field := d.item("$.includes", "includes", i)
			return d.err(path, field, "cannot read %s: %v: the path is relative to the manifest's folder", p, unwrapPath(err))
		}
		f.includes[filepath.ToSlash(inc)] = sourceText(b)
		f.includePaths = append(f.includePaths, p)
	}
	if _, ok := f.src["cuda"]; ok {
		f.includes[cudaHeaderName] = cudaHeader
	}
	return nil
}

// source is a kernel source: its path, text and language (cuda, metal).
type source struct{ path, code, language string }

func (s source) lang() string { return s.language }
