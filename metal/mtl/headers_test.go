package mtl

// A reader of Apple's metal-cpp headers (Metal/, Foundation/, QuartzCore/)
// that extracts, for every message the C++ wrappers send, the declaring
// class, the selector string, whether it goes to a class object, the
// header file, and the kinds of the arguments and result as the C++
// signatures give them. It is test code: the checks in tables_test.go use
// it to hold testdata/selectors.tsv against the real headers.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// headerMethod is one sendMessage call found in a metal-cpp header.
type headerMethod struct {
	Recv, Sel string
	Class     bool
	Header    string // relative to the metal-cpp root: "Metal/MTLDevice.hpp"
	Args      []Kind
	ArgKnown  []bool // false where the C++ type did not map to a kind
	Ret       Kind
	RetKnown  bool
	Line      int
}

// headerFunc is an extern "C" function declared in a header.
type headerFunc struct {
	Name     string
	Header   string
	Args     []Kind
	ArgKnown []bool
	Ret      Kind
	RetKnown bool
}

// headerIndex is what parseHeaders found.
type headerIndex struct {
	methods map[string][]headerMethod // by selector string
	funcs   map[string]headerFunc
	files   int
}

var (
	reDefSel   = regexp.MustCompile(`_(MTL|NS|CA)_PRIVATE_DEF_SEL\(\s*(\w+)\s*,\s*"([^"]*)"\s*\)`)
	reEnum     = regexp.MustCompile(`_(?:MTL|NS|CA)_(?:ENUM|OPTIONS)\(\s*([\w:]+)\s*,\s*(\w+)\s*\)`)
	reUsing    = regexp.MustCompile(`\busing\s+(\w+)\s*=\s*([\w:]+)\s*;`)
	reInline   = regexp.MustCompile(`(?m)^_(?:MTL|NS|CA)_INLINE\s`)
	reDefHead  = regexp.MustCompile(`(?s)^_(?:MTL|NS|CA)_INLINE\s+(.*?)\s*\b((?:MTL|NS|CA)::\w+)(?:<[^>]*>)?::(\w+)\s*\((.*)\)\s*(?:const)?\s*$`)
	reSend     = regexp.MustCompile(`(?s)sendMessage(?:Safe)?<(.+?)>\(\s*([^,]+?)\s*,\s*_(MTL|NS|CA)_PRIVATE_SEL\((\w+)\)`)
	reExternC  = regexp.MustCompile(`extern\s+"C"\s+([^;(]*?)\s*\b(\w+)\s*\(([^)]*)\)\s*;`)
	reIdentArg = regexp.MustCompile(`^\w+$`)
	// reQualifier: words that do not change how a value travels.
	reQualifier = regexp.MustCompile(`\b(?:const|class|struct|static|inline|volatile)\b`)
)

// parseHeaders reads every .hpp under root's Metal, Foundation and
// QuartzCore folders.
func parseHeaders(root string) (*headerIndex, error) {
	var files []string
	for _, dir := range []string{"Foundation", "Metal", "QuartzCore"} {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.hpp"))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no Metal/*.hpp or Foundation/*.hpp: not a metal-cpp folder", root)
	}
	sort.Strings(files)
	texts := map[string]string{}
	selNames := map[string]string{} // "MTL.newLibraryWithSource_options_error_" → "newLibraryWithSource:options:error:"
	types := map[string]string{}    // enum or alias name → underlying type
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		rel = filepath.ToSlash(rel)
		t := string(b)
		texts[rel] = t
		for _, m := range reDefSel.FindAllStringSubmatch(t, -1) {
			selNames[m[1]+"."+m[2]] = m[3]
		}
		for _, m := range reEnum.FindAllStringSubmatch(t, -1) {
			types[m[2]] = m[1]
		}
		for _, m := range reUsing.FindAllStringSubmatch(t, -1) {
			types[m[1]] = m[2]
		}
	}
	idx := &headerIndex{methods: map[string][]headerMethod{}, funcs: map[string]headerFunc{}, files: len(files)}
	rels := make([]string, 0, len(texts))
	for r := range texts {
		rels = append(rels, r)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		t := texts[rel]
		for _, m := range reExternC.FindAllStringSubmatch(t, -1) {
			f := headerFunc{Name: m[2], Header: rel}
			f.Ret, f.RetKnown = cppKind(m[1], types)
			for _, p := range splitParams(m[3]) {
				typ, _ := paramTypeName(p)
				if typ == "void" && len(splitParams(m[3])) == 1 {
					break
				}
				k, ok := cppKind(typ, types)
				f.Args, f.ArgKnown = append(f.Args, k), append(f.ArgKnown, ok)
			}
			idx.funcs[f.Name] = f
		}
		starts := reInline.FindAllStringIndex(t, -1)
		for i, s := range starts {
			end := len(t)
			if i+1 < len(starts) {
				end = starts[i+1][0]
			}
			def := t[s[0]:end]
			brace := strings.Index(def, "{")
			if brace < 0 {
				continue
			}
			head := reDefHead.FindStringSubmatch(strings.TrimSpace(def[:brace]))
			if head == nil {
				continue
			}
			params := map[string]string{}
			for _, p := range splitParams(head[4]) {
				typ, name := paramTypeName(p)
				params[name] = typ
			}
			body := def[brace:]
			for _, sm := range reSend.FindAllStringSubmatchIndex(body, -1) {
				retType := body[sm[2]:sm[3]]
				recv := body[sm[4]:sm[5]]
				sel, ok := selNames[body[sm[6]:sm[7]]+"."+body[sm[8]:sm[9]]]
				if !ok {
					return nil, fmt.Errorf("%s: _%s_PRIVATE_SEL(%s) has no _PRIVATE_DEF_SEL", rel, body[sm[6]:sm[7]], body[sm[8]:sm[9]])
				}
				rest := body[sm[1]:]
				if semi := strings.Index(rest, ";"); semi >= 0 {
					rest = rest[:semi]
				}
				rest = strings.TrimSpace(rest)
				rest = strings.TrimSuffix(rest, ")")
				rest = strings.TrimPrefix(strings.TrimSpace(rest), ",")
				hm := headerMethod{Recv: head[2], Sel: sel, Header: rel,
					Class: recv != "this" && recv != "pObj",
					Line:  strings.Count(t[:s[0]], "\n") + 1}
				hm.Ret, hm.RetKnown = cppKind(retType, types)
				for _, a := range splitParams(rest) {
					typ, ok := params[a]
					k, known := cppKind(typ, types)
					if !ok || !reIdentArg.MatchString(a) {
						known = false
					}
					hm.Args, hm.ArgKnown = append(hm.Args, k), append(hm.ArgKnown, known)
				}
				idx.methods[sel] = append(idx.methods[sel], hm)
			}
		}
	}
	return idx, nil
}

// splitParams splits a parameter or argument list at top-level commas.
func splitParams(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(', '<', '[':
			depth++
		case ')', '>', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if last := strings.TrimSpace(s[start:]); last != "" {
		out = append(out, last)
	}
	return out
}

// paramTypeName splits "const NS::String* source" into its type and name.
func paramTypeName(p string) (typ, name string) {
	p = strings.TrimSpace(p)
	i := len(p)
	for i > 0 && (p[i-1] == '_' || p[i-1] >= 'a' && p[i-1] <= 'z' || p[i-1] >= 'A' && p[i-1] <= 'Z' || p[i-1] >= '0' && p[i-1] <= '9') {
		i--
	}
	if i == 0 { // a type alone ("void")
		return p, ""
	}
	return strings.TrimSpace(p[:i]), p[i:]
}

// cppKind maps a C++ type from metal-cpp to a Kind; ok is false for types
// mltop never passes (blocks, handlers) and anything unrecognised.
func cppKind(typ string, types map[string]string) (Kind, bool) {
	t := reQualifier.ReplaceAllString(typ, " ")
	t = strings.ReplaceAll(strings.ReplaceAll(t, " ", ""), "&", "")
	t = strings.TrimPrefix(t, "std::")
	if strings.HasSuffix(t, "**") {
		return KPtr, true
	}
	if base, ok := strings.CutSuffix(t, "*"); ok {
		switch k, known := cppKind(base, types); {
		case base == "char":
			return KCStr, true
		case base == "void":
			return KPtr, true
		case known && k != KID:
			return KPtr, true // a scalar out-parameter (MTL::Timestamp*)
		}
		return KID, true
	}
	short := t
	if i := strings.LastIndex(t, "::"); i >= 0 {
		short = t[i+2:]
	}
	switch short {
	case "void":
		return KVoid, true
	case "SEL":
		return KSel, true
	case "bool", "BOOL":
		return KBool, true
	case "double", "CFTimeInterval", "TimeInterval":
		return KDouble, true
	case "uint8_t":
		return KU8, true
	case "uint32_t", "unsignedint", "mach_port_t", "io_object_t", "io_service_t", "io_registry_entry_t", "IOOptionBits":
		return KU32, true
	case "int32_t", "int", "kern_return_t":
		return KI32, true
	case "UInteger", "uint64_t", "unsignedlong", "unsignedlonglong":
		return KUint, true
	case "Integer", "int64_t", "long", "longlong":
		return KInt, true
	case "Size":
		if t == "Size" || t == "MTL::Size" {
			return KSize, true
		}
	case "Range":
		if t == "Range" || t == "NS::Range" {
			return KRange, true
		}
	}
	if u, ok := types[short]; ok && u != t {
		return cppKind(u, types)
	}
	return 0, false
}
