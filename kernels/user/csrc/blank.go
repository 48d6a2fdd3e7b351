package csrc

import (
	"bytes"
	"strings"
)

// Blank returns src with its host code (every Decl that is Host, and the
// member functions marked __host__ alone of the classes kept) replaced by
// spaces: newlines and preprocessor lines stay, so the result has the same
// lines, columns and conditionals as src.
func Blank(src string, f *File) string {
	var spans [][2]int
	for _, d := range f.Decls {
		if d.Host() {
			spans = append(spans, [2]int{d.Start, d.End})
		} else {
			spans = append(spans, d.hostMembers...)
		}
	}
	if len(spans) == 0 {
		return src
	}
	b := []byte(src)
	directive := make([]bool, len(b))
	for _, d := range f.Directives {
		for i := d.Start; i < d.End && i < len(b); i++ {
			directive[i] = true
		}
	}
	touched := map[int]bool{} // lines (by their first byte) that lost code
	for _, s := range spans {
		ls := lineStart(b, min(s[0], len(b)))
		for i := s[0]; i < s[1] && i < len(b); i++ {
			if b[i] == '\n' {
				ls = i + 1
			} else if b[i] != '\r' && !directive[i] {
				b[i] = ' '
				touched[ls] = true
			}
		}
	}
	// a blanked line's trailing spaces go: columns of what stays are kept
	var out strings.Builder
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start
		}
		line := b[start:end]
		if touched[start] {
			line = bytes.TrimRight(line, " ")
		}
		out.Write(line)
		if end < len(b) {
			out.WriteByte('\n')
		}
		start = end + 1
	}
	return out.String()
}

// lineStart is the offset of the first byte of the line holding b[i].
func lineStart(b []byte, i int) int {
	return bytes.LastIndexByte(b[:i], '\n') + 1
}
