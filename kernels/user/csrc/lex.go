package csrc

import "strings"

// This file is the lexer under Scan: tokens with byte offsets, the
// preprocessor lines as Directives, raw strings, digit separators, and which
// lines start outside any comment or literal (where a line may be inserted).

// Directive is one preprocessor line (with its backslash continuations).
type Directive struct {
	Kind       string   // "if", "ifdef", "ifndef", "elif", "else", "endif", "define", "undef", "include", "pragma", …
	Line       int      // first line (1-based)
	EndLine    int      // last line
	Start, End int      // byte offsets of the directive's text, newline excluded
	Tests      []string // names an #if/#ifdef/#ifndef/#elif/#undef tests, `defined` itself dropped
	Defines    string   // the name a #define defines
	Body       []string // identifiers of a #define's body or a #pragma's text
	// Replacement is a function-like #define's replacement text (its
	// parameter list dropped, continuations joined); "" for other lines.
	Replacement string
	// Value is an object-like #define's replacement text (comments
	// dropped, continuations joined): "(WARP_COUNT * 32)"; "" otherwise.
	Value   string
	Include string // the header an #include names: stdio.h, common.h
	System  bool   // #include <…> rather than "…"
	Dead    bool   // inside an `#if 0` (or the #else of an `#if 1`)
	cond    string // an #if/#elif's condition, an #ifdef/#ifndef/#elifdef/#elifndef's name
	// deadAfter: the branch this #if/#elif/#else opens is dead (markDead)
	deadAfter bool
}

// ltok is a token with its byte span, or (dir >= 0) the place of a
// preprocessor line in the token stream.
type ltok struct {
	kind       Kind
	text       string
	line       int
	start, end int
	dir        int // index into the directives, -1 for a code token
}

type lexer struct {
	src   string
	i     int
	line  int
	toks  []ltok
	dirs  []Directive
	dirty map[int]bool // lines that start inside a comment, literal or continuation
}

// lex splits src into tokens and directives. It never fails: unterminated
// comments and literals end at the end of the input.
func lex(src string) *lexer {
	l := &lexer{src: src, line: 1, dirty: map[int]bool{}}
	atLineStart := true
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.newline()
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
			continue
		case c == '\\' && l.i+1 < len(src) && (src[l.i+1] == '\n' || src[l.i+1] == '\r'):
			l.i++
			l.skipCR()
			if l.i < len(src) && src[l.i] == '\n' {
				l.newline()
				l.dirty[l.line] = true
			}
			continue
		case c == '#' && atLineStart:
			l.directive()
			continue
		case strings.HasPrefix(src[l.i:], "//"):
			l.lineComment()
			continue
		case strings.HasPrefix(src[l.i:], "/*"):
			l.blockComment()
			continue
		}
		atLineStart = false
		l.token()
	}
	return l
}

func (l *lexer) skipCR() {
	for l.i < len(l.src) && l.src[l.i] == '\r' {
		l.i++
	}
}

func (l *lexer) newline() {
	l.line++
	l.i++
}

// lineComment skips a // comment; a backslash at its end continues it.
func (l *lexer) lineComment() {
	for l.i < len(l.src) && l.src[l.i] != '\n' {
		if l.src[l.i] == '\\' && l.i+1 < len(l.src) && l.src[l.i+1] == '\n' {
			l.i++
			l.newline()
			l.dirty[l.line] = true
			continue
		}
		l.i++
	}
}

func (l *lexer) blockComment() {
	l.i += 2
	for l.i < len(l.src) && !strings.HasPrefix(l.src[l.i:], "*/") {
		if l.src[l.i] == '\n' {
			l.newline()
			l.dirty[l.line] = true
			continue
		}
		l.i++
	}
	l.i = min(l.i+2, len(l.src))
}

func (l *lexer) emit(k Kind, start int, line int) {
	text := l.src[start:l.i]
	if k == Literal {
		text = string(l.src[start]) + string(l.src[start])
	}
	l.toks = append(l.toks, ltok{kind: k, text: text, line: line, start: start, end: l.i, dir: -1})
}

// token reads one code token at l.i.
func (l *lexer) token() {
	src, start, line := l.src, l.i, l.line
	c := src[l.i]
	switch {
	case c == '"' || c == '\'':
		l.quoted(c)
		l.toks = append(l.toks, ltok{kind: Literal, text: string(c) + string(c), line: line, start: start, end: l.i, dir: -1})
	case isIdentByte(c):
		for l.i < len(src) && (isIdentByte(src[l.i]) || isDigit(src[l.i])) {
			l.i++
		}
		word := src[start:l.i]
		if l.i < len(src) && src[l.i] == '"' && (word == "R" || word == "u8R" || word == "LR" || word == "uR" || word == "UR") {
			l.rawString()
			l.toks = append(l.toks, ltok{kind: Literal, text: `""`, line: line, start: start, end: l.i, dir: -1})
			return
		}
		l.emit(Ident, start, line)
	case isDigit(c) || c == '.' && l.i+1 < len(src) && isDigit(src[l.i+1]):
		for l.i < len(src) {
			d := src[l.i]
			if isIdentByte(d) || isDigit(d) || d == '.' {
				l.i++
			} else if (d == '+' || d == '-') && strings.ContainsRune("eEpP", rune(src[l.i-1])) {
				l.i++
			} else if d == '\'' && l.i+1 < len(src) && (isDigit(src[l.i+1]) || isIdentByte(src[l.i+1])) {
				l.i++ // digit separator: 1'000'000
			} else {
				break
			}
		}
		l.emit(Number, start, line)
	case strings.HasPrefix(src[l.i:], "[[") || strings.HasPrefix(src[l.i:], "]]") || strings.HasPrefix(src[l.i:], "::"):
		l.i += 2
		l.emit(Punct, start, line)
	case c >= 0x80:
		_, n := decodeRune(src[l.i:])
		l.i += n
	default:
		l.i++
		l.emit(Punct, start, line)
	}
}

// quoted skips a string or character literal; it ends at its quote or at
// the end of the line (an unterminated literal).
func (l *lexer) quoted(q byte) {
	l.i++
	for l.i < len(l.src) && l.src[l.i] != q && l.src[l.i] != '\n' {
		if l.src[l.i] == '\\' && l.i+1 < len(l.src) {
			l.i++
			if l.src[l.i] == '\n' {
				l.newline()
				l.dirty[l.line] = true
				continue
			}
		}
		l.i++
	}
	if l.i < len(l.src) && l.src[l.i] == q {
		l.i++
	}
}

// rawString skips R"delim( … )delim" (l.i at the quote).
func (l *lexer) rawString() {
	open := l.i + 1
	p := strings.IndexByte(l.src[open:], '(')
	if p < 0 || p > 16 || strings.ContainsAny(l.src[open:open+p], " \\\n)") {
		l.quoted('"') // not a raw string after all
		return
	}
	closing := ")" + l.src[open:open+p] + `"`
	body := open + p + 1
	end := strings.Index(l.src[body:], closing)
	stop := len(l.src)
	if end >= 0 {
		stop = body + end + len(closing)
	}
	for k := l.i; k < stop; k++ {
		if l.src[k] == '\n' {
			l.line++
			l.dirty[l.line] = true
		}
	}
	l.i = stop
}

// directive reads a preprocessor line into a Directive and a marker token.
func (l *lexer) directive() {
	start, line := l.i, l.line
	var text strings.Builder
	for l.i < len(l.src) && l.src[l.i] != '\n' {
		switch {
		case l.src[l.i] == '\\' && l.i+1 < len(l.src) && l.src[l.i+1] == '\n':
			l.i++
			l.newline()
			l.dirty[l.line] = true
			text.WriteByte(' ')
		case strings.HasPrefix(l.src[l.i:], "/*"):
			l.blockComment()
			text.WriteByte(' ')
		case strings.HasPrefix(l.src[l.i:], "//"):
			l.lineComment()
		default:
			text.WriteByte(l.src[l.i])
			l.i++
		}
	}
	d := parseDirective(text.String())
	d.Line, d.EndLine, d.Start, d.End = line, l.line, start, l.i
	l.dirs = append(l.dirs, d)
	l.toks = append(l.toks, ltok{kind: Punct, text: "#", line: line, start: start, end: l.i, dir: len(l.dirs) - 1})
}

// parseDirective reads the text of one preprocessor line ("#  ifdef X").
func parseDirective(text string) Directive {
	body := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "#"))
	k := 0
	for k < len(body) && (isIdentByte(body[k]) || isDigit(body[k])) {
		k++
	}
	d := Directive{Kind: body[:k]}
	rest := body[k:]
	words := identsOf(rest)
	switch d.Kind {
	case "if", "elif", "ifdef", "ifndef", "undef", "elifdef", "elifndef":
		if d.Kind != "undef" {
			d.cond = strings.TrimSpace(rest)
		}
		for _, w := range words {
			if w != "defined" && w != "__has_include" && w != "__has_include_next" {
				d.Tests = append(d.Tests, w)
			}
		}
	case "define":
		if len(words) > 0 {
			d.Defines = words[0]
			after := strings.TrimLeft(rest, " \t")[len(words[0]):]
			body := after
			if strings.HasPrefix(after, "(") { // function-like: drop the parameter list
				if p := strings.IndexByte(after, ')'); p >= 0 {
					body = after[p+1:]
					d.Replacement = strings.TrimSpace(body)
				}
			} else {
				d.Value = strings.TrimSpace(body)
			}
			d.Body = identsOf(body)
		}
	case "pragma":
		d.Body = words
	case "include", "include_next", "import":
		r := strings.TrimSpace(rest)
		if strings.HasPrefix(r, "<") {
			if e := strings.IndexByte(r, '>'); e > 0 {
				d.Include, d.System = r[1:e], true
			}
		} else if strings.HasPrefix(r, `"`) {
			if e := strings.IndexByte(r[1:], '"'); e >= 0 {
				d.Include = r[1 : e+1]
			}
		}
	}
	return d
}

// identsOf lists the identifiers of a directive's text, skipping literals.
func identsOf(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case isIdentByte(c):
			j := i
			for j < len(s) && (isIdentByte(s[j]) || isDigit(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case isDigit(c):
			for i < len(s) && (isIdentByte(s[i]) || isDigit(s[i]) || s[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
