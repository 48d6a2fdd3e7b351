package csrc

import (
	"fmt"
	"slices"
	"strings"
)

// StructDecl is a struct or class definition read from the source: its data
// members in declaration order. Member functions, static members, nested
// type definitions and member typedefs/usings are not data and are left out
// (Typedefs reads the usings).
type StructDecl struct {
	Name string
	// Base is the one base class (`struct P : public Base`), "" for none.
	Base   string
	Fields []StructField
	Line   int // line of the struct's name
	// Initialized: a member has a default initializer (`int n = 0;`) or
	// the struct declares a constructor, so it is not a C++03 POD, and
	// the Itanium ABI may place a derived class's members in its tail
	// padding.
	Initialized bool
	// Hidden: a data member is private or protected (a class's members
	// before any access label included), which also makes the struct no
	// C++03 POD.
	Hidden bool
	// Members names every data member in order, also those FindStruct
	// refuses (`void (*f)(int)`, `struct { int a; } in`), so that a
	// message about a refused struct can list its fields; Fields is then
	// incomplete.
	Members []string
}

// StructField is one data member. `int a, *b;` is two fields.
type StructField struct {
	Name string
	// Type is the member's type before its declarator, qualifiers and
	// `struct` dropped: "int", "index_t", "void", "Inner".
	Type    string
	Pointer bool // a pointer member (`void *__restrict__ x_ptr`)
	// PointeeConst: what the pointer points to is const (`const float* w`).
	PointeeConst bool
	// Extents are an array member's extents as written, outermost first
	// (`int m[2][3]`: "2", "3"); nil for a non-array.
	Extents []string
	Line    int
}

// Declared writes the field as a declaration: "void* x_ptr", "int shape[4]".
func (f StructField) Declared() string {
	t := f.Type
	if f.PointeeConst {
		t = "const " + t
	}
	if f.Pointer {
		t += "*"
	}
	s := t + " " + f.Name
	for _, x := range f.Extents {
		s += "[" + x + "]"
	}
	return s
}

// FindStruct reads the definition of the struct (or class) name in src:
// `struct name { … };`, `struct name : public Base { … };` or `typedef
// struct [tag] { … } name;`. A qualified name (`ns::Params`) is looked up
// by its last part. found is false when src defines no such struct; err
// names a member mltop cannot lay out (a bit-field, a reference, a
// function pointer, an alignment attribute, several or virtual bases);
// d.Members still names all of them.
func FindStruct(src, name string) (d StructDecl, found bool, err error) {
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	toks := Tokenize(src)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Text != "struct" && t.Text != "class" {
			continue
		}
		// struct name [final] [: bases] {
		if i+1 < len(toks) && toks[i+1].Text == name {
			j := i + 2
			if j < len(toks) && toks[j].Text == "final" {
				j++
			}
			base, open, err := baseClause(toks, j, name)
			if err != nil {
				return StructDecl{}, true, err
			}
			if open < 0 {
				continue // a declaration, a use (`struct name x;`) or a template argument
			}
			d, err := structBody(toks, open, name, t.Text == "class")
			d.Base, d.Line = base, toks[i+1].Line
			return d, true, err
		}
		// typedef struct [tag] { … } name;
		if i > 0 && toks[i-1].Text == "typedef" {
			j := i + 1
			if j < len(toks) && toks[j].Kind == Ident {
				j++
			}
			if j >= len(toks) || toks[j].Text != "{" {
				continue
			}
			end := Matching(toks, j)
			if end+2 < len(toks) && toks[end+1].Text == name && toks[end+2].Text == ";" {
				d, err := structBody(toks, j, name, t.Text == "class")
				d.Line = toks[end+1].Line
				return d, true, err
			}
		}
	}
	return StructDecl{}, false, nil
}

// baseClause reads `: [public] Base` from toks[j] up to the `{` that opens
// the body; open is -1 when no body follows.
func baseClause(toks []Token, j int, name string) (base string, open int, err error) {
	if j >= len(toks) {
		return "", -1, nil
	}
	if toks[j].Text == "{" {
		return "", j, nil
	}
	if toks[j].Text != ":" {
		return "", -1, nil
	}
	var words []string
	for j++; j < len(toks) && toks[j].Text != "{" && toks[j].Text != ";"; j++ {
		words = append(words, toks[j].Text)
	}
	if j >= len(toks) || toks[j].Text != "{" {
		return "", -1, nil
	}
	if slices.Contains(words, ",") {
		return "", j, fmt.Errorf("struct %s has several base classes (%s): mltop lays out a struct with at most one", name, strings.Join(words, " "))
	}
	if slices.Contains(words, "virtual") {
		return "", j, fmt.Errorf("struct %s has a virtual base class: mltop cannot lay it out", name)
	}
	words = slices.DeleteFunc(words, func(w string) bool { return w == "public" || w == "private" || w == "protected" })
	return tidyType(strings.Join(words, " ")), j, nil
}

// structBody reads the data members between the braces at toks[open]
// (a class's members are private until a label says otherwise). A member
// it refuses gives the error, and the members after it are read on for
// their names (Members).
func structBody(toks []Token, open int, name string, isClass bool) (StructDecl, error) {
	d := StructDecl{Name: name}
	var refused error
	refuse := func(err error, names ...string) {
		if refused == nil {
			refused = err
		}
		d.Members = append(d.Members, names...)
	}
	end := Matching(toks, open)
	var member []Token
	hidden := isClass
	for i := open + 1; i < end; i++ {
		t := toks[i]
		switch {
		case (t.Text == "public" || t.Text == "private" || t.Text == "protected") && i+1 < end && toks[i+1].Text == ":":
			hidden = t.Text != "public"
			i++
			continue
		case t.Text == "{":
			close := Matching(toks, i)
			if startsTypeDef(member) {
				semi := close + 1
				for semi < end && toks[semi].Text != ";" {
					semi++
				}
				switch {
				case close+1 < end && toks[close+1].Text != ";":
					refuse(fmt.Errorf("struct %s: line %d defines a %s inside it with a member of that type: define the inner type on its own and declare the member by its name", name, t.Line, member[0].Text),
						declaredNames(toks[close+1:semi], false)...)
					i, member = semi, member[:0]
					continue
				case member[0].Text == "union" || len(member) == 1:
					refuse(fmt.Errorf("struct %s: line %d declares an anonymous %s member: mltop lays out named fields of scalars, pointers and structs", name, t.Line, member[0].Text))
					i, member = semi, member[:0]
					continue
				}
			}
			if isFunction(member) || startsTypeDef(member) {
				if isFunction(member) && member[0].Text == name {
					d.Initialized = true // a constructor
				}
				// a member function's body, or a nested type's definition
				i = close
				if i+1 < end && toks[i+1].Text == ";" {
					i++
				}
				member = member[:0]
				continue
			}
			member = append(member, toks[i:close+1]...) // a brace initializer
			i = close
			continue
		case t.Text == ";":
			fs, init, err := dataMembers(member, name)
			if err != nil {
				refuse(err, declaredNames(member, true)...)
				member = member[:0]
				continue
			}
			d.Fields = append(d.Fields, fs...)
			for _, f := range fs {
				d.Members = append(d.Members, f.Name)
			}
			d.Initialized = d.Initialized || init
			d.Hidden = d.Hidden || hidden && len(fs) > 0
			member = member[:0]
			continue
		}
		member = append(member, t)
	}
	return d, refused
}

// declaredNames are the names a member declaration that dataMembers
// refuses declares, read loosely: `int a : 3, b` (a, b), `float& r`,
// `void (*fn)(int)` (fn), `alignas(16) float v[4]` (v). A static member,
// a using or a friend declares none. typed: the member starts with its
// type (not so the declarators after a nested type's closing brace).
func declaredNames(member []Token, typed bool) []string {
	if len(member) == 0 {
		return nil
	}
	switch member[0].Text {
	case "static", "using", "typedef", "friend", "template", "static_assert":
		return nil
	}
	var names []string
	for d, decl := range SplitAtCommas(member, true) {
		var kept []Token
		for k := 0; k < len(decl); k++ {
			switch t := decl[k]; {
			case alignWords[t.Text] && k+1 < len(decl) && decl[k+1].Text == "(":
				k = Matching(decl, k+1) // the attribute and its arguments
			case t.Text == "(" && k+2 < len(decl) && decl[k+1].Text == "*" && decl[k+2].Kind == Ident:
				kept = append(kept, decl[k+2]) // a function pointer's name
				k = len(decl)
			case t.Text == "=" || t.Text == "{" || t.Text == ":" && (k+1 >= len(decl) || decl[k+1].Text != ":") && (k == 0 || decl[k-1].Text != ":"):
				k = len(decl) // an initializer or a bit-field's width
			default:
				kept = append(kept, t)
			}
		}
		if n := lastIdentBeforeBracket(kept); n > 0 || n == 0 && (d > 0 || !typed) { // the first declarator follows the type
			names = append(names, kept[n].Text)
		}
	}
	return names
}

// isFunction says whether a member is a function (a parenthesis outside an
// initializer, not a function pointer or an attribute).
func isFunction(member []Token) bool {
	for k, t := range member {
		if t.Text == "(" && k+1 < len(member) && member[k+1].Text == "*" {
			return false // a function pointer: dataMembers refuses it
		}
	}
	for k, t := range member {
		if t.Text == "=" || t.Text == "{" {
			return false
		}
		if t.Text == "(" && k > 0 && !alignWords[member[k-1].Text] && !(k+1 < len(member) && member[k+1].Text == "*") {
			return true
		}
	}
	return false
}

var alignWords = map[string]bool{"alignas": true, "__align__": true, "__attribute__": true, "__declspec": true}

// startsTypeDef says whether a member opens a nested type's definition.
func startsTypeDef(member []Token) bool {
	return len(member) > 0 && (member[0].Text == "struct" || member[0].Text == "class" || member[0].Text == "union" || member[0].Text == "enum")
}

// dataMembers reads one member declaration (its tokens up to the `;`):
// the fields it declares, none for a function, a static member, a using
// or a friend. init says whether it has a default initializer.
func dataMembers(member []Token, name string) ([]StructField, bool, error) {
	if len(member) == 0 || isFunction(member) {
		return nil, false, nil
	}
	switch member[0].Text {
	case "using", "typedef", "static", "friend", "template", "static_assert", "enum":
		return nil, false, nil
	}
	line := member[0].Line
	for k, t := range member {
		switch {
		case alignWords[t.Text]:
			return nil, false, fmt.Errorf("struct %s: line %d sets an alignment (%s): mltop lays out fields at their natural alignment only", name, line, t.Text)
		case t.Text == "(":
			return nil, false, fmt.Errorf("struct %s: line %d declares a function pointer: mltop passes data pointers only", name, line)
		case t.Text == "&":
			return nil, false, fmt.Errorf("struct %s: line %d declares a reference member: mltop passes pointers and scalars", name, line)
		case t.Text == ":" && (k == 0 || member[k-1].Text != ":"):
			return nil, false, fmt.Errorf("struct %s: line %d declares a bit-field: mltop cannot lay out bit-fields", name, line)
		case t.Text == "union":
			return nil, false, fmt.Errorf("struct %s: line %d declares a union: mltop lays out structs of scalars, pointers and structs", name, line)
		}
	}
	var fields []StructField
	init := false
	var typ []string
	constType := false
	for n, decl := range SplitAtCommas(member, true) {
		if k := slices.IndexFunc(decl, func(t Token) bool { return t.Text == "=" || t.Text == "{" }); k >= 0 {
			decl, init = decl[:k], true
		}
		if n == 0 { // the type: the words before the first * or the name
			k := slices.IndexFunc(decl, func(t Token) bool { return t.Text == "*" })
			if k < 0 {
				k = lastIdentBeforeBracket(decl)
			}
			if k <= 0 {
				return nil, init, fmt.Errorf("struct %s: cannot read the member on line %d", name, line)
			}
			for _, t := range decl[:k] {
				switch t.Text {
				case "const":
					constType = true
				case "volatile", "mutable", "struct", "class", "__restrict__", "__restrict":
				default:
					typ = append(typ, t.Text)
				}
			}
			decl = decl[k:]
		}
		f := StructField{Type: tidyType(strings.Join(typ, " ")), PointeeConst: constType, Line: line}
		k := lastIdentBeforeBracket(decl)
		if k < 0 || len(typ) == 0 {
			return nil, init, fmt.Errorf("struct %s: cannot read the member on line %d", name, line)
		}
		f.Name = decl[k].Text
		for _, t := range decl[:k] {
			if t.Text == "*" {
				if f.Pointer {
					return nil, init, fmt.Errorf("struct %s: member %s on line %d is a pointer to a pointer: mltop passes one buffer's address per pointer field", name, f.Name, line)
				}
				f.Pointer = true
			}
		}
		var words []string
		for _, t := range decl[k+1:] {
			switch t.Text {
			case "]]", "[[": // a nested extent's brackets (`x[n][lens[n - 1]]`), lexed as one token
				words = append(words, t.Text[:1], t.Text[:1])
			default:
				words = append(words, t.Text)
			}
		}
		f.Extents = nestedExtents(words)
		fields = append(fields, f)
	}
	return fields, init, nil
}

// SplitAtCommas splits toks at the commas outside (), [] and {}; with
// angles also outside <> (template arguments: a declaration's, or a
// __launch_bounds__ argument's), never in an expression, where < compares.
func SplitAtCommas(toks []Token, angles bool) [][]Token {
	var out [][]Token
	depth, start := 0, 0
	for k, t := range toks {
		switch t.Text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "<":
			if angles {
				depth++
			}
		case ">":
			if angles {
				depth--
			}
		case ",":
			if depth == 0 {
				out = append(out, toks[start:k])
				start = k + 1
			}
		}
	}
	return append(out, toks[start:])
}

// lastIdentBeforeBracket is the index of a declarator's name: the last
// identifier before its first `[`, or -1.
func lastIdentBeforeBracket(decl []Token) int {
	end := len(decl)
	if k := slices.IndexFunc(decl, func(t Token) bool { return t.Text == "[" }); k >= 0 {
		end = k
	}
	for k := end - 1; k >= 0; k-- {
		if decl[k].Kind == Ident && !qualifiers[decl[k].Text] && decl[k].Text != "__restrict__" && decl[k].Text != "__restrict" {
			return k
		}
	}
	return -1
}

// nestedExtents are the extents of an array member's brackets (words
// after its name), outermost first; a bracket inside an extent
// (`[lens[n - 1]]`) is part of it.
func nestedExtents(words []string) []string {
	var out []string
	for k := 0; k < len(words) && words[k] == "["; {
		end, depth := k+1, 0
		for ; end < len(words) && (words[end] != "]" || depth > 0); end++ {
			switch words[end] {
			case "[":
				depth++
			case "]":
				depth--
			}
		}
		out = append(out, strings.Join(words[k+1:min(end, len(words))], " "))
		k = end + 1
	}
	return out
}
