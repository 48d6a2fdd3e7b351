package mslemu

import (
	"regexp"
	"sort"
	"strings"
)

// Threadgroup arrays are statics on the emulation (forEmulation), so an
// index past the end of one reads zeros or the next static and a check
// passes that a GPU fails (garbage or a fault). Each subscript of a
// declared `threadgroup T name[N];` array after its declaration in its
// block, and of a `[[threadgroup(k)]]` pointer parameter in its kernel's
// body, is checked: `name[i]` becomes `emu_tg_at(name, "name")[i]`, whose
// operator[] (metal_stdlib) stops the run with a message naming the array,
// the index and the size. The array itself stays a C array, so that it
// decays to a pointer, takes casts and pointer arithmetic, and passes to
// templates as before; only subscripts written on its name are checked
// (an index through a pointer taken from it is not), and of a 2-D array
// the first index. A member (`p.name[i]`, `p->name[i]`) and a
// redeclaration (`float name[4];`) are left alone.
func checkThreadgroupIndexing(src string) string {
	type span struct {
		from, to int // the region where name's subscripts are checked
		name     string
	}
	var spans []span
	code := codeMask(src)
	for _, m := range threadgroupArray.FindAllStringSubmatchIndex(src, -1) {
		decl := src[m[4]:m[5]]
		name, isArray := declaredName(decl)
		if !isArray || code[m[0]] == 0 {
			continue
		}
		if end := blockEnd(src, code, m[1]); end > m[1] {
			spans = append(spans, span{m[1], end, name})
		}
	}
	for _, m := range tgParam.FindAllStringSubmatchIndex(src, -1) {
		if code[m[0]] == 0 {
			continue
		}
		open := strings.IndexByte(src[m[1]:], '{')
		if open < 0 {
			continue
		}
		open += m[1]
		if end := blockEnd(src, code, open+1); end > open {
			spans = append(spans, span{open, end, src[m[2]:m[3]]})
		}
	}
	if len(spans) == 0 {
		return src
	}
	type edit struct {
		at   int // the name's offset
		name string
	}
	var edits []edit
	for _, s := range spans {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(s.name) + `\s*\[`)
		for _, m := range re.FindAllStringIndex(src[s.from:s.to], -1) {
			at := s.from + m[0]
			if code[at] != 0 && subscriptOfName(src, at) {
				edits = append(edits, edit{at, s.name})
			}
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.at < last {
			continue // two spans of one name (nested blocks): once
		}
		b.WriteString(src[last:e.at])
		b.WriteString(`emu_tg_at(` + e.name + `, "` + e.name + `")`)
		last = e.at + len(e.name)
	}
	b.WriteString(src[last:])
	return b.String()
}

// tgParam is a pointer parameter in threadgroup memory with its
// [[threadgroup(k)]] attribute: `threadgroup float* buf [[threadgroup(0)]]`.
var tgParam = regexp.MustCompile(`\bthreadgroup\s+[\w:<>, ]+?\*\s*(\w+)\s*\[\[\s*threadgroup\s*\(\s*\d+\s*\)\s*\]\]`)

// declaredName is the name a threadgroupArray declaration (`float s[N];`,
// `MD<T> shared[N];`) declares, and whether it is an array.
func declaredName(decl string) (string, bool) {
	head, _, isArray := strings.Cut(decl, "[")
	head = strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(head), ";"), " \t\n")
	i := len(head)
	for i > 0 && (isWordByte(head[i-1])) {
		i--
	}
	return head[i:], isArray
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// declWords are words a subscripted name may follow in an expression; any
// other word before it (a type) makes it a declaration.
var declWords = map[string]bool{"return": true, "case": true, "else": true, "do": true, "sizeof": true, "co_return": true, "throw": true, "delete": true}

// subscriptOfName says whether the name at src[at] is an array named
// that, subscripted: not a member (after . -> ::) and not declared here
// (after a type's name).
func subscriptOfName(src string, at int) bool {
	i := at
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n' || src[i-1] == '\r') {
		i--
	}
	if i == 0 {
		return true
	}
	switch c := src[i-1]; {
	case c == '.', c == ':', c == '>' && i >= 2 && src[i-2] == '-':
		return false
	case isWordByte(c):
		j := i
		for j > 0 && isWordByte(src[j-1]) {
			j--
		}
		return declWords[src[j:i]]
	}
	return true
}

// codeMask marks each byte of src that is code (1), not a comment or a
// string or character literal (0).
func codeMask(src string) []byte {
	m := make([]byte, len(src)+1)
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return m
			}
			i += end + 4
		case src[i] == '"' || src[i] == '\'':
			q := src[i]
			i++
			for i < len(src) && src[i] != q && src[i] != '\n' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
		default:
			m[i] = 1
			i++
		}
	}
	return m
}

// blockEnd is the offset of the } that closes the block open at from
// (the first unmatched } in code after it), or -1.
func blockEnd(src string, code []byte, from int) int {
	depth := 0
	for i := from; i < len(src); i++ {
		if code[i] == 0 {
			continue
		}
		switch src[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}
