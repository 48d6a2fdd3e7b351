// Package scaffold writes a starting kernel.yaml for a kernel source
// (`mltop new`).
package scaffold

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// Manifest writes a starting manifest for the kernel entry in src (the
// text of the file at srcPath, which the manifest will name relative to
// dir). Pointer parameters become buffers (const → inputs, others →
// outputs), int scalars become dims; notes say what was guessed and what
// to fill in.
func Manifest(name, srcPath, src, entry, dir string) (string, []string, error) {
	if !user.ValidName(name) {
		return "", nil, fmt.Errorf("%q is not a usable kernel name: use letters, digits and _, starting with a letter", name)
	}
	lang := "cuda"
	switch strings.ToLower(filepath.Ext(srcPath)) {
	case ".metal":
		lang = "metal"
	case ".cu", ".cuh", ".cuda":
	default:
		return "", nil, fmt.Errorf("%s: want a .cu or .metal file", srcPath)
	}
	sig, found, ok := csrc.FindEntry(src, entry)
	if !ok {
		hint := "it has no __global__ or kernel functions"
		if len(found) > 0 {
			hint = "kernels found: " + strings.Join(found, ", ")
		}
		return "", nil, fmt.Errorf("%s has no kernel %q (%s)", srcPath, entry, hint)
	}
	rel, err := filepath.Rel(dir, srcPath)
	if err != nil {
		rel = srcPath
	}
	g := guessParams(sig)
	notes, bufs, dims, args, dimNames, usesT, firstDim := g.notes, g.bufs, g.dims, g.args, g.dimNames, g.usesT, g.firstDim
	if len(bufs) == 0 {
		return "", nil, fmt.Errorf("%s: %s has no pointer parameters: a kernel needs at least one buffer to write", srcPath, sig)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `mltop new` from %s (%s). Fill in the TODOs; keys: docs/own-kernels.md.\n", rel, sig)
	fmt.Fprintf(&b, "name: %s\ndescription: TODO one line\n", name)
	fmt.Fprintf(&b, "sources: {%s: %s}\n", lang, rel)
	if usesT {
		b.WriteString("dtypes: [f32, f16, bf16]   # passed as the macro T\n")
	} else {
		b.WriteString("dtypes: [f32]   # the buffers' types are fixed in the source; use the macro T to make them follow the spec's dtype\n")
	}
	b.WriteString("knobs:\n  WG: {values: [64, 128, 256, 512, 1024], default: 256, doc: threads per group}   # TODO: your tile knobs (each a -D macro)\n")
	b.WriteString("dims:\n" + strings.Join(dims, "\n") + "\n")
	b.WriteString("flags: {}\nrules: []\n")
	b.WriteString("buffers:\n" + strings.Join(bufs, "\n") + "\n")
	b.WriteString("dispatches:\n")
	fmt.Fprintf(&b, "  - entry: %s\n    grid: [\"cdiv(%s, WG)\", 1, 1]   # TODO: groups (blocks)\n    threads: [WG, 1, 1]\n    args: [%s]\n", sig.Entry, firstDim, strings.Join(args, ", "))
	known := map[string]bool{"WG": true, firstDim: true}
	for _, d := range dimNames {
		known[d] = true
	}
	tgm, tgmNotes := sharedItems(src, known)
	notes = append(notes, tgmNotes...)
	if len(tgm) > 0 {
		b.WriteString("    tgm:   # from the source's static shared (threadgroup) arrays: the TGM budget\n")
		for _, t := range tgm {
			b.WriteString("      " + t + "\n")
		}
	}
	// No bytes: every buffer counts once (README); flops has no guess.
	b.WriteString("# work: {flops: \"TODO\"}   # TODO: FLOPs of one run (an expression of dims and knobs); bytes: leave out to count every buffer once\n")
	b.WriteString("check: none   # TODO: {python: ref.py} with def reference(inputs, dims) -> {output: array}\n")
	notes = append(notes,
		fmt.Sprintf("guessed grid cdiv(%s, WG) × WG threads: one thread per element; fix grid and threads for your kernel", firstDim),
		"buffer shapes are TODO: each is [first dim] for now",
		"check is none (runs are `unchecked`): write ref.py and set check: {python: ref.py}",
		"knob, dim and flag names become -D macros (except where they are also kernel parameter names): do not use them as other identifiers")
	return b.String(), notes, nil
}

// guesses is what Manifest makes of an entry's parameters: manifest lines
// for buffers and dims, the dispatch's args, and notes on each guess.
type guesses struct {
	notes, bufs, dims, args, dimNames []string
	usesT                             bool   // a buffer follows the spec's dtype
	firstDim                          string // the shapes' and grid's size
}

// guessParams makes buffers of pointer parameters (const → inputs, others
// → outputs) and dims of int scalars.
func guessParams(sig csrc.Signature) guesses {
	var notes []string
	var bufs, dims, args, scalarArgs, dimNames []string
	scalarSeen := false
	usesT := false
	firstDim := ""
	for i, p := range sig.Bindable() {
		pname := p.Name
		if pname == "" {
			pname = fmt.Sprintf("arg%d", i)
		}
		if user.Reserved[pname] {
			old := pname
			if pname = strings.ToUpper(pname); user.Reserved[pname] {
				pname += "_"
			}
			notes = append(notes, fmt.Sprintf("parameter %s is named %s in the manifest (%s is a CSV column or an mltop macro)", old, pname, old))
		}
		switch {
		case p.Pointer && strings.Contains(p.Type, "constant") && !strings.Contains(p.Type, "*"):
			notes = append(notes, fmt.Sprintf("%s (%s) is a struct of scalars: list its int fields, in order, as dims at the end of args (mltop packs them into one struct)", pname, p.Type))
		case p.Pointer:
			if scalarSeen {
				notes = append(notes, fmt.Sprintf("buffer %s comes after a scalar: mltop passes buffers first, then scalars; reorder the kernel's parameters", pname))
			}
			dt := elemDType(p.Type)
			if dt == "T" {
				usesT = true
				if !typeWords(p.Type)["T"] {
					notes = append(notes, fmt.Sprintf("buffer %s has type %s: guessed dtype T (the spec's dtype, the macro T); use f32, f16, bf16 or i32 if it is fixed", pname, p.Type))
				}
			}
			role := ", out: true"
			init := ""
			if p.Const {
				role = ""
				if dt == "i32" {
					init = `, init: "randint(0, 1024)"`
				} else {
					init = `, init: "normal(0, 1)"`
				}
			}
			bufs = append(bufs, fmt.Sprintf("  - {name: %s, dtype: %s, shape: [N]%s%s}   # TODO: shape", pname, dt, init, role))
			args = append(args, pname)
			if !p.Const {
				notes = append(notes, fmt.Sprintf("%s is not const: guessed it is an output (out: true); if the kernel only reads it, drop out: true and add an init", pname))
			}
		case csrc.IsIntScalar(p.Scalar):
			scalarSeen = true
			dims = append(dims, fmt.Sprintf("  %s: {default: 1024, min: 1}   # TODO: default and range", pname))
			scalarArgs = append(scalarArgs, pname)
			dimNames = append(dimNames, pname)
			if firstDim == "" {
				firstDim = pname
			}
		default:
			scalarSeen = true
			notes = append(notes, fmt.Sprintf("%s is a %s scalar: mltop passes scalars as i32; make it an int parameter or a macro (a knob)", pname, p.Scalar))
			scalarArgs = append(scalarArgs, "0")
		}
	}
	if firstDim == "" {
		firstDim = "N"
		dims = append([]string{"  N: {default: 1048576, min: 1}   # TODO: the problem size"}, dims...)
	} else {
		// shapes were written with N: point them at the first dim.
		for i := range bufs {
			bufs[i] = strings.Replace(bufs[i], "shape: [N]", "shape: ["+firstDim+"]", 1)
		}
	}
	args = append(args, scalarArgs...)
	return guesses{notes: notes, bufs: bufs, dims: dims, args: args, dimNames: dimNames, usesT: usesT, firstDim: firstDim}
}

func typeWords(t string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(t, func(r rune) bool { return r == ' ' || r == '*' || r == '&' }) {
		out[w] = true
	}
	return out
}

// elemDType guesses a buffer's dtype from its C type.
func elemDType(t string) string {
	w := typeWords(t)
	switch {
	case w["T"]:
		return "T"
	case w["float"]:
		return "f32"
	case w["half"] || w["__half"]:
		return "f16"
	case w["bfloat"] || w["__nv_bfloat16"]:
		return "bf16"
	case w["int"] || w["int32_t"] || w["uint"] || w["uint32_t"] || w["unsigned"]:
		return "i32"
	}
	return "T"
}

// sharedDecl matches a static shared array: CUDA __shared__ or Metal
// threadgroup, a type, a name and one or more [extent]s.
var sharedDecl = regexp.MustCompile(`(?m)(extern\s+)?(?:__shared__|\bthreadgroup)\s+(?:volatile\s+)?(?:__align__\(\d+\)\s+)?([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+)`)

// extentRE is one [extent] of a declaration.
var extentRE = regexp.MustCompile(`\[([^\]]*)\]`)

// scalarBytes are the sizes of element types a shared array may have.
var scalarBytes = map[string]int{
	"float": 4, "int": 4, "unsigned": 4, "uint": 4, "int32_t": 4, "uint32_t": 4,
	"half": 2, "__half": 2, "__nv_bfloat16": 2, "bfloat": 2, "short": 2, "ushort": 2,
	"double": 8, "float2": 8, "int2": 8, "half2": 4, "__half2": 4, "float4": 16, "int4": 16,
	"char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1, "int64_t": 8, "long": 8,
}

// sharedItems suggests a tgm: item for each static shared array in src:
// its bytes as an expression when the element type and every extent are
// known (a literal, a dim, a knob, T), else a commented TODO line.
func sharedItems(src string, known map[string]bool) (items, notes []string) {
	for _, m := range sharedDecl.FindAllStringSubmatch(src, -1) {
		typ, name, ext := m[2], m[3], m[4]
		if m[1] != "" {
			notes = append(notes, fmt.Sprintf("extern shared array %s: its size is set at launch; write its bytes as dynamic_tgm: in the dispatch", name))
			continue
		}
		var factors []string
		ok := true
		for _, e := range extentRE.FindAllStringSubmatch(ext, -1) {
			x := strings.TrimSpace(e[1])
			if _, err := strconv.Atoi(x); err == nil || known[x] {
				factors = append(factors, x)
			} else {
				ok = false
			}
		}
		size := ""
		switch {
		case typ == "T":
			size = "sizeof(T)"
		case scalarBytes[typ] > 0:
			size = strconv.Itoa(scalarBytes[typ])
		default:
			ok = false
		}
		decl := strings.TrimSpace(m[0])
		if !ok {
			items = append(items, fmt.Sprintf("# - {name: %s, bytes: \"TODO\"}   # TODO: bytes of %s", name, decl))
			continue
		}
		expr := strings.Join(append(factors, size), " * ")
		if n, err := evalProduct(factors, size); err == nil {
			expr = strconv.Itoa(n)
		}
		items = append(items, fmt.Sprintf("- {name: %s, bytes: \"%s\"}   # %s", name, expr, decl))
	}
	return items, notes
}

// evalProduct multiplies literal factors; an error when one is a name.
func evalProduct(factors []string, size string) (int, error) {
	n, err := strconv.Atoi(size)
	if err != nil {
		return 0, err
	}
	for _, f := range factors {
		v, err := strconv.Atoi(f)
		if err != nil {
			return 0, err
		}
		n *= v
	}
	return n, nil
}
