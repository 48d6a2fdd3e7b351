package mslemu

import (
	"regexp"
	"strconv"
	"strings"
)

// Metal overloads functions on address spaces: a member on its object's
// (`complex_t() thread`, `complex_t() threadgroup`, `operator float()
// const device`), a free function on its parameters' (`operator+=(thread
// complex_t<T>& a, …)` beside `operator+=(device complex_t<T>& a, …)`),
// as MLX's complex.h and logging.h do. On the CPU every address space is
// the same memory and the emulation empties the qualifiers, so these are
// one function defined several times. dropAddressSpaceOverloads keeps the
// first definition of each such set (the bodies are the same code for each
// address space) and drops the others, keeping their line endings; a kept
// member loses the address space after its parameter list (a constructor
// may not be `const`, which `constant` would become).

// addressSpace is a Metal address-space word.
var addressSpace = regexp.MustCompile(`\b(?:thread|threadgroup|device|constant)\b`)

// initList is where a constructor's member initializers start: a single
// colon after the parameter list and its qualifiers.
var initList = regexp.MustCompile(`\)[\s\w]*?:(?:[^:]|$)`)

// memberSpace is an address space after a member's parameter list.
var memberSpace = regexp.MustCompile(`\)(\s*(?:const\s+)?)(?:thread|threadgroup|device|constant)\b`)

// dropMemberSpace blanks, in head (a function's head, masked its maskCode
// twin), the address space after the member's parameter list: only
// after a ')' that closes a top-level group, in code. A ')' in a
// parameter's comment (`[[buffer(0)]], // (batch, n)` before `device
// float* y`) or in an attribute is none: the parameter kept its address
// space, and an explicit instantiation listing them still matched.
func dropMemberSpace(head, masked []byte) {
	for _, loc := range memberSpace.FindAllSubmatchIndex(masked, -1) {
		depth := 0
		for _, c := range masked[:loc[0]+1] {
			switch c {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if depth != 0 {
			continue
		}
		for k := loc[3]; k < loc[1]; k++ { // the address space (after the ')' and any const)
			head[k] = ' '
		}
	}
}

// maskCode returns src with comments, string and character literals and
// preprocessor lines (with their continuations) blanked to spaces, line
// endings kept, so that braces and words in them do not count.
func maskCode(src string) []byte {
	b := []byte(src)
	lineStart := true
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			lineStart = true
			continue
		case lineStart && c == '#':
			// a line continues when the source's (not the blanked
			// copy's) character before its end is a backslash
			for ; i < len(b) && !(b[i] == '\n' && !continued(src, i)); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			lineStart = true
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
			lineStart = true
			continue
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := len(b)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			i--
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(b) && b[j] != c && b[j] != '\n'; j++ {
				if b[j] == '\\' {
					b[j] = ' '
					j++
				}
				b[j] = ' '
			}
			i = j
		}
		if c != ' ' && c != '\t' {
			lineStart = false
		}
	}
	return b
}

// continued reports whether the line ending at src[nl] ('\n') ends in a
// backslash (before an optional '\r'): a #define goes on to the next line.
func continued(src string, nl int) bool {
	j := nl - 1
	if j >= 0 && src[j] == '\r' {
		j--
	}
	return j >= 0 && src[j] == '\\'
}

// isFunctionHead reports whether the text before a `{` heads a function
// definition: it has a parameter list and is no class, namespace or enum.
func isFunctionHead(head string) bool {
	h := strings.TrimSpace(head)
	if !strings.Contains(h, "(") || strings.HasSuffix(h, "=") || strings.HasSuffix(h, ",") {
		return false
	}
	for _, kw := range []string{"struct", "class", "namespace", "enum", "union"} {
		if regexp.MustCompile(`^(?:template\s*<[^{]*>\s*)?` + kw + `\b`).MatchString(h) {
			return false
		}
	}
	return true
}

func dropAddressSpaceOverloads(src string) string {
	if !addressSpace.MatchString(src) {
		return src
	}
	m := maskCode(src)
	type scope struct {
		open  int // offset of its '{' (-1: the file)
		fn    bool
		start int // where the current statement starts
	}
	stack := []scope{{open: -1}}
	type def struct {
		start, open int
		key         string
		spaced      bool
	}
	var open []def // function definitions whose body is open, by depth
	seen := map[string]bool{}
	out := []byte(src)
	for i := 0; i < len(m); i++ {
		top := &stack[len(stack)-1]
		switch m[i] {
		case ';':
			top.start = i + 1
		case '{':
			head := string(m[top.start:i])
			fn := !top.fn && isFunctionHead(head)
			if fn {
				k := head
				if loc := initList.FindStringIndex(k); loc != nil {
					k = k[:loc[0]+1]
				}
				k = strings.Join(strings.Fields(addressSpace.ReplaceAllString(k, " ")), " ")
				open = append(open, def{start: top.start, open: i, key: strconv.Itoa(top.open) + "|" + k, spaced: addressSpace.MatchString(head)})
			}
			stack = append(stack, scope{open: i, fn: fn || top.fn, start: i + 1})
		case '}':
			if len(stack) == 1 {
				continue
			}
			closed := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			parent := &stack[len(stack)-1]
			parent.start = i + 1
			if len(open) == 0 || open[len(open)-1].open != closed.open {
				continue
			}
			d := open[len(open)-1]
			open = open[:len(open)-1]
			if !seen[d.key] {
				seen[d.key] = true
				if d.spaced {
					dropMemberSpace(out[d.start:d.open], m[d.start:d.open])
				}
				continue
			}
			if !d.spaced {
				continue
			}
			end := i + 1
			j := end
			for j < len(m) && (m[j] == ' ' || m[j] == '\t') {
				j++
			}
			if j < len(m) && m[j] == ';' {
				end = j + 1
			}
			for k := d.start; k < end; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			parent.start = end
			i = end - 1
		}
	}
	return string(out)
}

// classHead is the head of a struct, class or union body.
var classHead = regexp.MustCompile(`^(?:template\s*<[^{]*>\s*)?(?:struct|class|union)\b`)

// emptyTemplate is an explicit specialization's `template <>`.
var emptyTemplate = regexp.MustCompile(`\btemplate\s*<\s*>`)

// dropClassScopeSpecializations turns an explicit specialization of a
// member function template written inside its class (`template <> float
// operator()(float x, float y) {…}` in MLX's binary_ops.h), which clang
// takes and g++ does not (CWG 727), into a plain overload of that member:
// a call with those argument types picks it over the template, as it
// picks the specialization on Metal. (A call naming the template
// arguments, `op.template operator()<float>(…)`, would still take the
// template's body.)
func dropClassScopeSpecializations(src string) string {
	if !emptyTemplate.MatchString(src) {
		return src
	}
	m := maskCode(src)
	out := []byte(src)
	type scope struct {
		class bool
		start int
	}
	stack := []scope{{}}
	for i := 0; i < len(m); i++ {
		top := &stack[len(stack)-1]
		switch m[i] {
		case ';':
			top.start = i + 1
		case '{':
			head := strings.TrimSpace(string(m[top.start:i]))
			if top.class {
				if loc := emptyTemplate.FindStringIndex(head); loc != nil && loc[0] == 0 {
					at := top.start + strings.Index(string(m[top.start:i]), "template")
					end := at + emptyTemplate.FindStringIndex(string(m[at:i]))[1]
					for k := at; k < end; k++ {
						if out[k] != '\n' {
							out[k] = ' '
						}
					}
				}
			}
			stack = append(stack, scope{class: classHead.MatchString(head), start: i + 1})
		case '}':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			stack[len(stack)-1].start = i + 1
		}
	}
	return string(out)
}
