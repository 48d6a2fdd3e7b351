package csrc

import (
	"strings"
	"unicode"
)

// Kind is what a Token is.
type Kind int

const (
	Ident   Kind = iota // an identifier or keyword: kernel, float, X
	Number              // a numeric literal as written: 1, 0x10, 1.5f
	Literal             // a string or character literal; Text is "" or '' (its contents are dropped)
	Punct               // punctuation: one byte, or [[ ]] ::
)

// Token is one token of C/C++/MSL source.
type Token struct {
	Kind Kind
	Text string
	Line int // 1-based
}

// Tokenize splits C/C++/MSL source into identifiers, numbers and punctuation,
// dropping comments, string literals' contents and preprocessor lines. It is
// enough to find function signatures, not to parse C++.
func Tokenize(src string) []Token {
	var out []Token
	line := 1
	i := 0
	atLineStart := true
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' && atLineStart:
			// a preprocessor line, with backslash continuations
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					line++
					i += 2
					continue
				}
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				end = len(src) - i - 2
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += 2 + end + 2
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, Token{Kind: Literal, Text: string(c) + string(c), Line: line})
			i = j + 1
			atLineStart = false
			continue
		}
		atLineStart = false
		if isIdentByte(c) {
			j := i
			for j < len(src) && (isIdentByte(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, Token{Kind: Ident, Text: src[i:j], Line: line})
			i = j
			continue
		}
		if c >= '0' && c <= '9' {
			j := i
			for j < len(src) && (isIdentByte(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			out = append(out, Token{Kind: Number, Text: src[i:j], Line: line})
			i = j
			continue
		}
		if strings.HasPrefix(src[i:], "[[") || strings.HasPrefix(src[i:], "]]") || strings.HasPrefix(src[i:], "::") {
			out = append(out, Token{Kind: Punct, Text: src[i : i+2], Line: line})
			i += 2
			continue
		}
		if c >= 0x80 { // non-ASCII: skip the rune
			_, n := decodeRune(src[i:])
			i += n
			continue
		}
		out = append(out, Token{Kind: Punct, Text: string(c), Line: line})
		i++
	}
	return out
}

func decodeRune(s string) (rune, int) {
	for n := 1; n <= 4 && n <= len(s); n++ {
		r := []rune(s[:n])
		if len(r) == 1 && r[0] != unicode.ReplacementChar {
			return r[0], n
		}
	}
	return unicode.ReplacementChar, 1
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
