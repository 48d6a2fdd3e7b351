package metal

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A manifest may name a Metal entry as a template with its arguments
// ("scale_rows<float>", "k<half, 4>"), as a CUDA entry is named. Metal's
// newFunctionWithName: finds only host names, so such an entry launches
// the source's own [[host_name("…")]] instantiation of the template with
// those arguments, or else one that mltop appends to the source
// (ResolveTemplateEntry).

// TemplateEntry is a Metal entry written as a template name with its
// arguments, as the manifest renders it for one spec: the dtype's Metal
// type and the knobs' values put in.
type TemplateEntry struct {
	Name string   // as written: "scale_rows", "ns::k"
	Args []string // each as written, spaces collapsed: "float", "4"
	// Written is the entry as the manifest writes it ("scale_rows<T>"),
	// which messages name when it is set (CheckTemplateEntry when the
	// manifest loads).
	Written string
	// DType is the manifest's dtype name when an argument may be it: a
	// type, whichever a spec makes it.
	DType string
}

// String is the entry as messages name it: Written, else name<args>.
func (te TemplateEntry) String() string {
	if te.Written != "" {
		return te.Written
	}
	return te.instance()
}

// instance is the template's name with the arguments: what C++ calls it.
func (te TemplateEntry) instance() string {
	return te.Name + "<" + strings.Join(te.Args, ", ") + ">"
}

// base is the template's own name, without its namespaces.
func (te TemplateEntry) base() string { return te.Name[strings.LastIndex(te.Name, ":")+1:] }

var entryName = regexp.MustCompile(`^\s*((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)\s*<`)

// ParseTemplateEntry reads "name<args…>"; ok is false for an entry
// without a template argument list (a kernel or a host name) or one it
// cannot read (unbalanced brackets, text after the closing '>').
func ParseTemplateEntry(entry string) (te TemplateEntry, ok bool) {
	m := entryName.FindStringSubmatchIndex(entry)
	if m == nil {
		return te, false
	}
	rest := entry[m[1]-1:]
	args, end, ok := templateArgs(rest)
	if !ok || strings.TrimSpace(rest[end+1:]) != "" {
		return te, false
	}
	return TemplateEntry{Name: strings.Join(strings.Fields(strings.ReplaceAll(entry[m[2]:m[3]], "::", " :: ")), ""), Args: args}, true
}

// CheckTemplateEntry says whether src has a kernel template te.Name that
// takes te's arguments: as many as it has parameters (those with defaults
// may be left out), a type for each `typename`/`class` parameter, a value
// for each other, and each integer or bool literal within its parameter's
// type. An argument "" is a value not known yet (a knob's): its count and
// kind are checked, not its range. Each error names the entry and what to
// write.
func CheckTemplateEntry(src string, te TemplateEntry) error {
	params, found, err := templateParams(expandMacros(src), te.base())
	if !found {
		return templateMissing(src, te)
	}
	if err != nil {
		return fmt.Errorf("entry %s: %w", te, err)
	}
	if len(te.Args) > len(params) {
		return fmt.Errorf("entry %s gives %d template arguments, but template %s takes %d (%s): write %s<%s>", te, len(te.Args), te.base(), len(params), templateDecl(params), te.Name, paramNames(params, len(params)))
	}
	for i, p := range params[len(te.Args):] {
		if p.Default == "" {
			return fmt.Errorf("entry %s leaves template parameter `%s %s` of %s (%s) without a value: write %s<%s>", te, p.Kind, p.Name, te.base(), templateDecl(params), te.Name, paramNames(params, len(te.Args)+i+1))
		}
	}
	for i, a := range te.Args {
		if err := argFits(params[i], a, a != "" && a == te.DType); err != nil {
			return fmt.Errorf("entry %s: template parameter `%s %s` of %s %v", te, params[i].Kind, params[i].Name, te.base(), err)
		}
	}
	return nil
}

// templateMissing says why te names no kernel template of src: a kernel
// of that name that is not a template, or none at all.
func templateMissing(src string, te TemplateEntry) error {
	if sigs, _ := KernelOverloads(src, te.base()); len(sigs) > 0 && len(sigs[0].Template) == 0 {
		return fmt.Errorf("entry %s: kernel %s is not a template: write entry: %s", te, te.base(), te.Name)
	}
	var templates []string
	for _, m := range kernelTemplate.FindAllStringSubmatch(expandMacros(src), -1) {
		if strings.Contains(m[1], "kernel") {
			templates = append(templates, m[2])
		}
	}
	have := "the source has no kernel templates"
	if len(templates) > 0 {
		have = "kernel templates: " + strings.Join(slices.Compact(slices.Sorted(slices.Values(templates))), ", ")
	}
	return fmt.Errorf("entry %s: no kernel template %s in the source (%s): name one of them, or a kernel without <…>", te, te.base(), have)
}

// kernelTemplate is a function template's head: its attributes (which
// say whether it is a kernel) and its name.
var kernelTemplate = regexp.MustCompile(`\btemplate\s*<[^;{]*?>\s*((?:(?:\[\[[^\]]*\]\]|kernel|static|inline)\s*)*)void\s+(\w+)\s*\(`)

func templateDecl(params []TemplateParam) string {
	var parts []string
	for _, p := range params {
		s := p.Kind + " " + p.Name
		if p.Default != "" {
			s += " = " + p.Default
		}
		parts = append(parts, s)
	}
	return "template <" + strings.Join(parts, ", ") + ">"
}

// paramNames lists the first n parameters' names, a template argument
// list to write.
func paramNames(params []TemplateParam, n int) string {
	var names []string
	for _, p := range params[:n] {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// typeKinds are the template parameter kinds that take a type.
var typeKinds = map[string]bool{"typename": true, "class": true}

// intRanges are the ranges of Metal's integer types a non-type template
// parameter may have.
var intRanges = map[string][2]float64{
	"char": {math.MinInt8, math.MaxInt8}, "int8_t": {math.MinInt8, math.MaxInt8},
	"uchar": {0, math.MaxUint8}, "unsigned char": {0, math.MaxUint8}, "uint8_t": {0, math.MaxUint8},
	"short": {math.MinInt16, math.MaxInt16}, "int16_t": {math.MinInt16, math.MaxInt16},
	"ushort": {0, math.MaxUint16}, "unsigned short": {0, math.MaxUint16}, "uint16_t": {0, math.MaxUint16},
	"int": {math.MinInt32, math.MaxInt32}, "int32_t": {math.MinInt32, math.MaxInt32},
	"uint": {0, math.MaxUint32}, "unsigned": {0, math.MaxUint32}, "unsigned int": {0, math.MaxUint32}, "uint32_t": {0, math.MaxUint32},
	"long": {math.MinInt64, math.MaxInt64}, "int64_t": {math.MinInt64, math.MaxInt64},
	"ulong": {0, math.MaxUint64}, "unsigned long": {0, math.MaxUint64}, "uint64_t": {0, math.MaxUint64}, "size_t": {0, math.MaxUint64},
}

// argFits checks one template argument against its parameter; dtype:
// the argument is the manifest's dtype name.
func argFits(p TemplateParam, arg string, dtype bool) error {
	kind := strings.TrimSpace(strings.TrimPrefix(strings.Join(strings.Fields(p.Kind), " "), "const "))
	if typeKinds[kind] {
		if arg != "" && isLiteral(arg) {
			return fmt.Errorf("takes a type, not %s: give a Metal type there (float, half, bfloat, int, …) or the dtype name", arg)
		}
		return nil
	}
	if arg == "" {
		return nil
	}
	if dtype {
		return fmt.Errorf("takes a value of type %s, not %s, the dtype's type: give a number, a knob or {expression} there", kind, arg)
	}
	if metalTypeWords[canonType(arg)] {
		return fmt.Errorf("takes a value of type %s, not the type %s: give a number, a knob or {expression} there", kind, arg)
	}
	v, isInt := intLiteral(arg)
	switch {
	case kind == "bool":
		if isInt && v != 0 && v != 1 {
			return fmt.Errorf("is a bool, and %s is neither true nor false: give a flag or a comparison (`{BQ > 32}`)", arg)
		}
	case isInt:
		if r, known := intRanges[kind]; known && (v < r[0] || v > r[1]) {
			return fmt.Errorf("cannot hold %s: type %s holds %.0f to %.0f; choose a value in range", arg, kind, r[0], r[1])
		}
	}
	return nil
}

// metalTypeWords are the types an argument may name where a value was
// expected: a type there is the manifest's mistake.
var metalTypeWords = map[string]bool{"float": true, "half": true, "bfloat": true, "int": true, "uint": true, "short": true,
	"ushort": true, "char": true, "uchar": true, "bool": true, "long": true, "ulong": true}

func isLiteral(s string) bool {
	if s == "true" || s == "false" {
		return true
	}
	_, ok := intLiteral(s)
	return ok
}

// intLiteral reads an integer literal (decimal or hex, a u/l suffix, a
// sign) or true/false as a number.
func intLiteral(s string) (float64, bool) {
	switch s = strings.ReplaceAll(s, " ", ""); s {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	s = strings.TrimRight(s, "uUlL")
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return float64(i), true
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return float64(u), true
	}
	return 0, false
}

// ResolveTemplateEntry is what launches te in src: the host name of the
// source's own [[host_name("…")]] instantiation of the template with te's
// arguments (compared after defaults are filled in, spaces, `metal::`,
// type aliases and literal suffixes normalised), with instantiation "";
// else a host name of mltop's and the explicit instantiation to append to
// the source, which names it:
//
//	template [[host_name("mltop_scale_rows_1a2b3c4d")]] [[kernel]] decltype(scale_rows<float>) scale_rows<float>;
func ResolveTemplateEntry(src string, te TemplateEntry) (host, instantiation string, err error) {
	if err := CheckTemplateEntry(src, te); err != nil {
		return "", "", err
	}
	want, err := Instantiation{Template: te.Name, Args: te.Args}.canonical(src)
	if err != nil {
		return "", "", err
	}
	hosts, err := HostNames(src)
	if err != nil {
		return "", "", err
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for h := range hosts {
			if !yield(h) {
				return
			}
		}
	})
	for _, h := range names {
		in := hosts[h]
		if in.Template[strings.LastIndex(in.Template, ":")+1:] != te.base() {
			continue
		}
		if got, err := in.canonical(src); err == nil && slices.Equal(got, want) {
			return h, "", nil
		}
	}
	sum := fnv.New32a()
	sum.Write([]byte(te.base() + "<" + strings.Join(want, ",") + ">"))
	host = fmt.Sprintf("mltop_%s_%08x", te.base(), sum.Sum32())
	if _, taken := hosts[host]; taken {
		return "", "", fmt.Errorf("entry %s: the source already has a [[host_name(%q)]] of another instantiation: rename it", te, host)
	}
	inst := te.instance()
	return host, fmt.Sprintf("template [[host_name(%q)]] [[kernel]] decltype(%s) %s;", host, inst, inst), nil
}

// canonical is the instantiation's arguments in the template's parameter
// order, defaults filled in, each normalised (canonArg).
func (in Instantiation) canonical(src string) ([]string, error) {
	base := in.Template[strings.LastIndex(in.Template, ":")+1:]
	params, err := TemplateParams(src, base)
	if err != nil {
		return nil, err
	}
	binds, err := Instantiation{Template: base, Args: in.Args}.Bindings(src)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = canonArg(binds[p.Name], p.Kind == "bool")
	}
	return out, nil
}

// typeAliases are spellings of one Metal type.
var typeAliases = map[string]string{
	"float32_t": "float", "float16_t": "half", "bfloat16_t": "bfloat",
	"unsigned": "uint", "unsigned int": "uint", "uint32_t": "uint", "int32_t": "int", "signed int": "int", "signed": "int",
	"unsigned short": "ushort", "uint16_t": "ushort", "int16_t": "short",
	"unsigned char": "uchar", "uint8_t": "uchar", "int8_t": "char", "signed char": "char",
	"unsigned long": "ulong", "uint64_t": "ulong", "size_t": "ulong", "int64_t": "long",
}

var metalQualifier = regexp.MustCompile(`(^|[^\w:])(?:::\s*)?metal\s*::\s*`)

// canonType writes a type as one spelling: without `metal::`, spaces
// collapsed, an alias as its Metal name.
func canonType(s string) string {
	s = strings.Join(strings.Fields(metalQualifier.ReplaceAllString(s, "$1")), " ")
	if t, ok := typeAliases[s]; ok {
		return t
	}
	if strings.ContainsAny(s, "<(") { // an alias inside a template's arguments: CumSum<bfloat16_t> is CumSum<bfloat>
		s = aliasWord.ReplaceAllStringFunc(s, func(w string) string { return typeAliases[w] })
	}
	return s
}

// aliasWord matches a typeAliases key as a whole word, the longest first
// (`unsigned int` before `unsigned`).
var aliasWord = func() *regexp.Regexp {
	keys := slices.Collect(maps.Keys(typeAliases))
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for i, k := range keys {
		keys[i] = strings.ReplaceAll(regexp.QuoteMeta(k), " ", `\s+`)
	}
	return regexp.MustCompile(`\b(?:` + strings.Join(keys, "|") + `)\b`)
}()

// canonArg normalises one template argument: an integer literal as its
// decimal value (a bool parameter's 1 as true), a type as canonType,
// anything else with spaces only where two words meet.
func canonArg(s string, isBool bool) string {
	if v, ok := intLiteral(s); ok {
		if isBool {
			return strconv.FormatBool(v != 0)
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s = canonType(s)
	var b strings.Builder
	fields := strings.Fields(s)
	for i, f := range fields {
		if i > 0 && isWordByte(fields[i-1][len(fields[i-1])-1]) && isWordByte(f[0]) {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// InstantiationFile is the file name the #line before an instantiation
// of mltop's gives it, so that a compiler message about it does not name
// a line past the end of the user's file.
const InstantiationFile = "mltop-entry-instantiation"

// InstantiateEntry makes entry launchable from src, the program's source
// as the compiler gets it (AssembleUserSource): a template entry
// ("scale_rows<float>") becomes the host name that launches it, src with
// the instantiation ResolveTemplateEntry writes appended when the source
// has none of its own; any other entry (a kernel, a host name) comes back
// as it is. The Metal backend and the emulation (mslemu) both call it.
func InstantiateEntry(src, entry string) (code, host string, err error) {
	te, ok := ParseTemplateEntry(entry)
	if !ok {
		return src, entry, nil
	}
	host, inst, err := ResolveTemplateEntry(src, te)
	if err != nil || inst == "" {
		return src, host, err
	}
	if !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	return src + fmt.Sprintf("#line 1 %q\n", InstantiationFile) + inst + "\n", host, nil
}
