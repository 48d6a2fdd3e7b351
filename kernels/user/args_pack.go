package user

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file expands a kernel's function parameter pack (`template
// <typename T, typename... ArgTypes> __global__ void k(T t, ArgTypes...
// args)`, as multi_tensor_apply_kernel is written) from the entry's
// template arguments: the arguments after those the named template
// parameters take are the pack's types, in order, and the pack parameter
// becomes one parameter per type, named args...[0], args...[1], … (C++26's
// pack indexing), each taking one value of args: with its C type.

// packParam finds the signature's function parameter pack: its index in
// the parameters and the template parameter it expands; ok is false when
// there is none.
func packParam(sig csrc.Signature) (index int, pack string, ok bool) {
	for i, p := range sig.Params {
		words := strings.Fields(strings.NewReplacer("*", " ", "&", " ").Replace(p.Type))
		if !slices.Contains(words, ".") {
			continue
		}
		for _, w := range words {
			if sig.IsTemplateParam(w) {
				return i, w, true
			}
		}
	}
	return 0, "", false
}

// nonPackTemplate are the template parameters before the pack: those the
// entry's first template arguments bind one to one.
func nonPackTemplate(sig csrc.Signature) []string {
	_, pack, ok := packParam(sig)
	if !ok {
		return sig.Template
	}
	return sig.Template[:slices.Index(sig.Template, pack)]
}

// expandPack returns sig with its parameter pack replaced by one parameter
// per type the entry names for it. When the entry names none (the pack
// would be deduced, which mltop does not do), the pack is dropped (an
// empty pack) and unnamed says how to name it: the caller reports it if
// args has values for it.
func expandPack(sig csrc.Signature, e *entryExpr, dtypeName string) (out csrc.Signature, unnamed error, err error) {
	at, pack, ok := packParam(sig)
	if !ok {
		return sig, nil, nil
	}
	p := sig.Params[at]
	first := slices.Index(sig.Template, pack)
	var types []string
	if e.hasArgs {
		for k, arg := range e.topArgs() {
			if k < first {
				continue
			}
			t, err := packType(arg, dtypeName)
			if err != nil {
				return sig, nil, fmt.Errorf("parameter `%s %s` of line %d takes its types from the entry's template arguments %d on: %v", packShown(p.Declared), p.Name, sig.Line, first+1, err)
			}
			types = append(types, t)
		}
	}
	out = sig
	out.Params = slices.Clone(sig.Params[:at])
	if len(types) == 0 {
		after := ""
		if first > 0 {
			after = " after those of " + strings.Join(sig.Template[:first], ", ")
		}
		unnamed = fmt.Errorf("parameter `%s %s` of %s (line %d) is a pack whose types C++ would deduce from a launch's arguments, which mltop does not do: name its types in entry:%s, one per value in args, as %s<%s>", packShown(p.Declared), p.Name, sig.Entry, sig.Line, after, sig.Entry, exampleTArgs(sig.Template[:first], pack))
	}
	pattern := strings.Join(slices.DeleteFunc(strings.Fields(p.Declared), func(w string) bool { return w == "." }), " ")
	for k, t := range types {
		decl := replaceWord(pattern, pack, t)
		q, err := parseOneParam(decl)
		if err != nil {
			return sig, nil, fmt.Errorf("parameter `%s %s` of line %d: its type %d, %s: %v", packShown(p.Declared), p.Name, sig.Line, k+1, t, err)
		}
		q.Name = fmt.Sprintf("%s...[%d]", p.Name, k)
		out.Params = append(out.Params, q)
	}
	out.Params = append(out.Params, sig.Params[at+1:]...)
	return out, unnamed, nil
}

// packType writes one template argument as a type: C++ words, or the
// dtype's name; a knob, dim or {expr} is a value, which no type pack takes.
func packType(arg []entryPart, dtypeName string) (string, error) {
	var b strings.Builder
	for _, part := range arg {
		switch {
		case part.p != nil:
			return "", fmt.Errorf("{%s} is a value, not a type", part.p.Source())
		case part.name != "" && part.name != dtypeName:
			return "", fmt.Errorf("%s is a value, not a type", part.name)
		case part.name != "":
			b.WriteString(" " + part.name + " ")
		default:
			b.WriteString(part.lit)
		}
	}
	t := strings.Join(strings.Fields(b.String()), " ")
	if t == "" {
		return "", fmt.Errorf("an empty template argument")
	}
	return t, nil
}

// parseOneParam reads a parameter declaration (`const float`, `float*`)
// as the kernel's parameters are read.
func parseOneParam(decl string) (csrc.Param, error) {
	sigs := csrc.FindEntries("__global__ void mltop_pack(" + decl + " mltop_elem) {}")
	if len(sigs) != 1 || len(sigs[0].Params) != 1 {
		return csrc.Param{}, fmt.Errorf("mltop cannot read %q as a parameter type", decl)
	}
	return sigs[0].Params[0], nil
}

// replaceWord replaces the identifier word in text with repl.
func replaceWord(text, word, repl string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if j := identEnd(text, i); j > i {
			if text[i:j] == word && (i == 0 || !isIdentByte(text[i-1])) {
				b.WriteString(repl)
			} else {
				b.WriteString(text[i:j])
			}
			i = j
			continue
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

func isIdentByte(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// packShown writes a pack's declared type as the source does: "ArgTypes...".
func packShown(declared string) string { return strings.ReplaceAll(declared, " . . .", "...") }

// exampleTArgs writes an entry's template arguments for a hint: the named
// parameters, then two of the pack's types.
func exampleTArgs(named []string, pack string) string {
	return strings.Join(append(slices.Clone(named), "type1", "type2, …"), ", ")
}
