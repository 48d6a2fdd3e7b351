// Package csrc reads C, C++, CUDA and Metal Shading Language source just
// enough for mltop: a tokenizer and the kernel entry points with their
// parameters. It is not a C++ parser.
package csrc

import (
	"fmt"
	"strings"
)

// Param is one parameter of a kernel entry point as written in the source.
type Param struct {
	Name    string // "X" (may be empty for an unnamed parameter)
	Type    string // the type as written, qualifiers dropped: "float*", "int", "constant Params&"
	Pointer bool   // a pointer or a device/constant reference: a buffer
	Const   bool   // const-qualified (an input)
	Scalar  string // for by-value scalars: "int", "unsigned", "float", … ; "" otherwise
	Attr    string // Metal attribute text ("buffer(0)", "thread_position_in_grid"), "" if none
}

// Signature is a kernel entry point found in a source file.
type Signature struct {
	Entry  string
	Params []Param
	Line   int // line of the entry's name (1-based)
}

// Buffers are the parameters bound as device buffers, in order. Metal's
// built-in attributes (thread ids etc.) are not parameters the caller binds.
func (s Signature) Bindable() []Param {
	var out []Param
	for _, p := range s.Params {
		if p.Attr != "" && !strings.HasPrefix(p.Attr, "buffer(") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// FindEntries lists the kernel entry points in src: CUDA `__global__`
// functions and Metal `kernel` / `[[kernel]]` functions.
func FindEntries(src string) []Signature {
	toks := Tokenize(src)
	var out []Signature
	for i := 0; i < len(toks); i++ {
		t := toks[i].Text
		isKernel := t == "__global__" || t == "kernel"
		if t == "[[" && i+2 < len(toks) && toks[i+1].Text == "kernel" && toks[i+2].Text == "]]" {
			isKernel = true
		}
		if !isKernel {
			continue
		}
		// The entry's name is the identifier before the first '(' that
		// follows (skipping template arguments is not needed: kernels in
		// a manifest are extern "C" or plain).
		j := i + 1
		depth := 0
		for j < len(toks) && !(toks[j].Text == "(" && depth == 0 && toks[j-1].Text != "__launch_bounds__") {
			switch toks[j].Text {
			case "(": // __launch_bounds__(…): skip it
				for d := 0; j < len(toks); j++ {
					if toks[j].Text == "(" {
						d++
					} else if toks[j].Text == ")" {
						if d--; d == 0 {
							break
						}
					}
				}
			case "<":
				depth++
			case ">":
				depth--
			case ";", "{", "}":
				j = len(toks)
			}
			if j < len(toks) {
				j++
			}
		}
		if j >= len(toks) || j == 0 {
			continue
		}
		name := toks[j-1]
		// `template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;`
		// instantiates k; it is not a kernel named decltype (metal.HostNames reads it).
		if !isIdentByte(name.Text[0]) || name.Text == "decltype" {
			continue
		}
		params, end := parseParams(toks, j)
		if end < 0 {
			continue
		}
		out = append(out, Signature{Entry: name.Text, Params: params, Line: name.Line})
		i = end
	}
	return out
}

// FindEntry finds entry's signature in src.
func FindEntry(src, entry string) (Signature, []string, bool) {
	var names []string
	for _, s := range FindEntries(src) {
		if s.Entry == entry {
			return s, nil, true
		}
		names = append(names, s.Entry)
	}
	return Signature{}, names, false
}

var qualifiers = map[string]bool{"const": true, "volatile": true, "__restrict__": true, "__restrict": true, "restrict": true,
	"device": true, "constant": true, "threadgroup": true, "thread": true, "struct": true, "unsigned": false}

// parseParams reads the parameter list starting at toks[open] == "(".
func parseParams(toks []Token, open int) ([]Param, int) {
	depth := 0
	var cur []string
	var params []Param
	flush := func() {
		if len(cur) == 0 || len(cur) == 1 && cur[0] == "void" {
			cur = nil
			return
		}
		params = append(params, makeParam(cur))
		cur = nil
	}
	for k := open; k < len(toks); k++ {
		t := toks[k].Text
		switch t {
		case "(", "<", "[[", "[":
			depth++
			if depth == 1 && t == "(" {
				continue
			}
		case ")", ">", "]]", "]":
			depth--
			if depth == 0 && t == ")" {
				flush()
				return params, k
			}
		case ",":
			if depth == 1 {
				flush()
				continue
			}
		case "{", ";":
			return nil, -1
		}
		cur = append(cur, t)
	}
	return nil, -1
}

func makeParam(ts []string) Param {
	var p Param
	// Metal attribute [[...]]
	var words []string
	for k := 0; k < len(ts); k++ {
		if ts[k] == "[[" {
			var attr []string
			k++
			for ; k < len(ts) && ts[k] != "]]"; k++ {
				attr = append(attr, ts[k])
			}
			p.Attr = strings.Join(attr, "")
			continue
		}
		words = append(words, ts[k])
	}
	// default value: drop "= …"
	for k, w := range words {
		if w == "=" {
			words = words[:k]
			break
		}
	}
	// the name is the last identifier if there is a type before it
	if n := len(words); n >= 2 && isIdentByte(words[n-1][0]) && !qualifiers[words[n-1]] && words[n-1] != "unsigned" {
		p.Name = words[n-1]
		words = words[:n-1]
	}
	var typ []string
	for _, w := range words {
		switch w {
		case "const":
			p.Const = true
			continue
		case "volatile", "__restrict__", "__restrict", "restrict", "struct":
			continue
		case "device", "constant", "threadgroup", "thread":
			typ = append(typ, w)
			continue
		case "*", "&":
			p.Pointer = true
		}
		typ = append(typ, w)
	}
	p.Type = strings.Join(typ, " ")
	p.Type = strings.ReplaceAll(strings.ReplaceAll(p.Type, " *", "*"), " &", "&")
	p.Type = strings.ReplaceAll(p.Type, " :: ", "::")
	if !p.Pointer {
		p.Scalar = p.Type
	}
	return p
}

// IsIntScalar says whether a by-value parameter type is an integer.
func IsIntScalar(t string) bool {
	switch strings.TrimSpace(t) {
	case "int", "unsigned", "unsigned int", "int32_t", "uint32_t", "uint", "long", "long long", "int64_t", "size_t", "short", "uint64_t":
		return true
	}
	return false
}

func (s Signature) String() string {
	parts := make([]string, len(s.Params))
	for i, p := range s.Params {
		parts[i] = strings.TrimSpace(p.Type + " " + p.Name)
	}
	return fmt.Sprintf("%s(%s)", s.Entry, strings.Join(parts, ", "))
}
