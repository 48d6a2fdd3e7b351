package user

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/csrc"
)

// This file prepares a user source for its compiler (USERKERNELS.md,
// decisions 1–3). At load, the source and the local headers it includes are
// scanned once, and each name mltop gives the source (knobs, dims, flags,
// values, the dtype name, DTYPE, `defines:`) gets an Injection: a macro before the
// first preprocessor line that tests it, nothing when the source declares
// it, a constexpr ahead of the source when the source only uses it. Per
// spec, render (prepare_text.go) writes the text with the values.

// InjectHow is how a name reaches the source.
type InjectHow string

const (
	// InjectMacro: `#define NAME v` right before the first preprocessor line
	// that tests or #defines NAME (system headers included earlier never see it).
	InjectMacro InjectHow = "macro"
	// InjectConstexpr: `constexpr int NAME = v;` (a `using` for the dtype
	// name) ahead of the source; parameters, locals and template
	// parameters of the same name shadow it.
	InjectConstexpr InjectHow = "constexpr"
	// InjectDeclared: the source declares NAME itself; mltop leaves it alone.
	InjectDeclared InjectHow = "declared"
	// InjectUnused: the source never mentions NAME.
	InjectUnused InjectHow = "unused"
)

// Injection is how one name mltop offers a source reaches it.
type Injection struct {
	Name string
	How  InjectHow
	File string // macro: the file of the line it goes before; declared: where the source declares it
	Line int
	// SourceWins (a macro): the line it goes before #defines or #undefs
	// NAME outside any #ifndef NAME, so the source's own value replaces
	// the manifest's (the compiler only warns about the redefinition).
	SourceWins bool
	// SourceValue is that #define's replacement text ("1024"), when it has one.
	SourceValue string
	// Hidden (a constexpr): every use of NAME is one a parameter or local
	// of the same name shadows, so the declaration reaches none of them;
	// HiddenIn is the function whose parameter it is ("" for locals).
	Hidden   bool
	HiddenIn string
	// HiddenByTemplate: that parameter is a template parameter, which the
	// entry's template argument sets (not the kernel's argument).
	HiddenByTemplate bool
}

func (in Injection) String() string {
	where := fmt.Sprintf("%s:%d", filepath.Base(in.File), in.Line)
	switch in.How {
	case InjectMacro:
		if in.SourceWins {
			return fmt.Sprintf("%s: #define before %s, where the source #defines it again without #ifndef %s: the source's value replaces the manifest's; wrap that #define in #ifndef %s … #endif, or drop %s from the manifest: its expressions may name the source's %s as it is", in.Name, where, in.Name, in.Name, in.Name, in.Name)
		}
		return fmt.Sprintf("%s: #define before %s, its first preprocessor use", in.Name, where)
	case InjectConstexpr:
		switch {
		case in.Hidden && in.HiddenIn != "" && in.HiddenByTemplate:
			return fmt.Sprintf("%s: declared ahead of the source (constexpr, or using for the dtype), and hidden inside the kernel by its template parameter %s (%s): the entry's template argument sets it there", in.Name, in.Name, in.HiddenIn)
		case in.Hidden && in.HiddenIn != "":
			return fmt.Sprintf("%s: declared ahead of the source (constexpr), and hidden inside the kernel by its parameter %s (%s): the kernel reads the argument, not this value", in.Name, in.Name, in.HiddenIn)
		case in.Hidden:
			return fmt.Sprintf("%s: declared ahead of the source (constexpr), and hidden by locals named %s wherever the source uses it: the source reads them, not this value", in.Name, in.Name)
		}
		return fmt.Sprintf("%s: declared ahead of the source (constexpr, or using for the dtype)", in.Name)
	case InjectDeclared:
		return fmt.Sprintf("%s: not injected: the source declares it (%s), so the manifest's value does not reach it", in.Name, where)
	}
	return fmt.Sprintf("%s: not injected: the source does not use it", in.Name)
}

// offerKind is what kind of value a name mltop offers holds.
type offerKind int

const (
	offerInt    offerKind = iota // knobs, dims, DTYPE, values: that are int expressions
	offerBool                    // flags, values: that are bool expressions
	offerType                    // the dtype name
	offerFloat                   // values: that are float expressions
	offerDefine                  // manifest defines: and DTYPE_<NAME>: a macro or nothing
)

type offer struct {
	name string
	kind offerKind
}

// unit is one file of a source: the main file or a local header.
type unit struct {
	path string // on disk
	name string // as the including file names it ("" for the main file)
	code string
	scan *csrc.File
	// compiled is the scan of what the compiler receives: for CUDA the host
	// code is blanked, so a name only host code mentions is not used.
	compiled *csrc.File
	local    map[int]*unit // directive index → the local header it includes
}

// prepared is a source scanned at load, ready to render per spec.
type prepared struct {
	lang     string
	offers   []offer
	units    []*unit  // the main file first, then headers in first-include order
	system   []string // system headers the files include, in order
	toolkit  toolkitHeaders
	stubs    map[string]string // CUDA: system header → the stub served for it
	plan     map[string]Injection
	declLine int                        // Metal: the main file's line the constexpr declarations go before (0: ahead of the source)
	inserts  map[*unit]map[int][]string // macro names inserted before a line
	edits    map[*unit][]lineEdit       // CUDA: spellings NVRTC refuses, rewritten (prepare_rewrite.go)
	declared map[string]bool            // names the source declares (standard macros skip them)
	macros   csrc.Macros                // what decides the files' #if conditions (loadSource)
}

// toolkitHeaders is what the CUDA toolkit offers this machine.
type toolkitHeaders struct {
	dirs       []string
	fp16, bf16 bool
	// libcu: the toolkit has libcu++ (<cuda/std/type_traits>), so the C++
	// standard headers are served as its cuda::std counterparts.
	libcu bool
	// usingStd: a file of the source says `using namespace std;`: the
	// <cmath> stub then leaves out libcu++'s math functions, which an
	// unqualified fabsf(x) would find beside CUDA's (ambiguous under CCCL 3).
	usingStd bool
	// onDevice: what of the toolkit's host-side libraries device code
	// names (prepare_hostlibs.go); the headers of those it does not are stubbed.
	onDevice hostLibraryUse
}

// toolkitIncludeDirs finds the CUDA toolkit's include directories; tests
// replace it (nil: no toolkit headers, the storage-struct fallback).
var toolkitIncludeDirs = cuda.ToolkitIncludeDirs

func findToolkit() toolkitHeaders {
	t := toolkitHeaders{dirs: toolkitIncludeDirs()}
	t.fp16, t.bf16 = t.has("cuda_fp16.h"), t.has("cuda_bf16.h")
	t.libcu = t.has("cuda/std/type_traits")
	return t
}

func (t toolkitHeaders) has(header string) bool {
	for _, d := range t.dirs {
		if st, err := os.Stat(filepath.Join(d, header)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// prepareSource scans a source and the local headers it includes (found
// beside the including file, then in includeDirs) and plans how each
// offered name reaches it. entryNames: see prepareLoaded.
func prepareSource(lang, path, code string, includeDirs []string, read func(string) ([]byte, error), offers []offer, entryNames []string, tk toolkitHeaders) (*prepared, error) {
	p, err := loadSource(lang, path, code, includeDirs, read, csrc.NVRTCMacros())
	if err != nil {
		return nil, err
	}
	return p.prepareLoaded(offers, entryNames, tk), nil
}

// loadSource reads and scans a source and, depth first, the local headers
// it includes (load), its #if conditions decided by macros (the manifest's
// defines: over NVRTC's own: builder.sourceMacros).
func loadSource(lang, path, code string, includeDirs []string, read func(string) ([]byte, error), macros csrc.Macros) (*prepared, error) {
	p := &prepared{lang: lang, macros: macros}
	main := &unit{path: path, code: code}
	if err := p.load(main, includeDirs, read, map[string]*unit{fileKey(path): main}, map[string]*unit{}, 0); err != nil {
		return nil, err
	}
	return p, nil
}

// prepareLoaded finishes a loaded source: CUDA host code blanked, the names the
// source declares, and how each offered name reaches it. entryNames are
// the identifiers of the manifest's entries (builder.entryNames): device
// code uses what they name, so no host code blanks it.
func (p *prepared) prepareLoaded(offers []offer, entryNames []string, tk toolkitHeaders) *prepared {
	p.toolkit, p.offers, p.inserts, p.declared = tk, offers, map[*unit]map[int][]string{}, map[string]bool{}
	p.scanCUDA(entryNames)
	for _, u := range p.units {
		for _, d := range u.scan.Decls {
			for _, n := range d.Names {
				p.declared[n] = true
			}
		}
	}
	p.plan = map[string]Injection{}
	for _, o := range offers {
		p.plan[o.name] = p.inject(o)
	}
	if p.lang == "metal" {
		p.declLine = p.afterMetalStdlib()
	}
	p.edits = p.sourceEdits()
	return p
}

// afterMetalStdlib is the line after the main file's first #include of a
// <metal_…> header, when no name to declare is used before it: real MSL
// needs no header for half, bfloat or constant, but the CPU emulation of
// MSL defines them there. 0 when there is no such line.
func (p *prepared) afterMetalStdlib() int {
	main := p.units[0].scan
	for _, d := range main.Directives {
		if d.Dead || !d.System || !strings.HasPrefix(d.Include, "metal_") {
			continue
		}
		for _, in := range p.plan {
			if u := main.FirstUse(in.Name); in.How == InjectConstexpr && u > 0 && u <= d.EndLine {
				return 0
			}
		}
		if d.EndLine < strings.Count(p.units[0].code, "\n") {
			return d.EndLine + 1
		}
		return 0
	}
	return 0
}

// load scans u and, depth first, the local headers it includes.
func (p *prepared) load(u *unit, dirs []string, read func(string) ([]byte, error), byPath, byName map[string]*unit, depth int) error {
	u.scan = csrc.ScanIn(u.code, p.macros)
	u.compiled = u.scan // CUDA: blanked once every file is loaded (scanCUDA)
	u.local = map[int]*unit{}
	p.units = append(p.units, u)
	for i, d := range u.scan.Directives {
		if d.Dead || d.Include == "" {
			continue
		}
		path, b := findLocal(d, filepath.Dir(u.path), dirs, read)
		if path == "" {
			if !slices.Contains(p.system, d.Include) {
				p.system = append(p.system, d.Include)
			}
			continue
		}
		if v, ok := byPath[fileKey(path)]; ok {
			u.local[i] = v
			continue
		}
		if other, ok := byName[d.Include]; ok && fileKey(other.path) != fileKey(path) {
			return fmt.Errorf("%s:%d includes %q, which is %s, but another file includes %s under that name: the compiler receives headers by name, so rename one", u.path, d.Line, d.Include, path, other.path)
		}
		if depth > 64 {
			return fmt.Errorf("%s:%d: local #includes nest more than 64 deep", u.path, d.Line)
		}
		v := &unit{path: path, name: d.Include, code: sourceText(b)}
		byPath[fileKey(path)], byName[d.Include] = v, v
		u.local[i] = v
		if err := p.load(v, dirs, read, byPath, byName, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// scanCUDA reads each CUDA unit as NVRTC will get it, once all are
// loaded: scanned with the #defines of the program's other local files
// (a macro one of them defines is no host header's binding macro to
// blank: a device function whose head a local header's macro writes
// stays, a launcher it writes is blanked), with the types and aliases only
// host code needs marked host (csrc.MarkHostOnly; what the entries name
// stays), then with its host code blanked (compiled).
func (p *prepared) scanCUDA(entryNames []string) {
	if p.lang != "cuda" {
		return
	}
	scans := make([]*csrc.File, len(p.units))
	for i, u := range p.units {
		scans[i] = u.scan
	}
	final := make([]*csrc.File, len(p.units))
	for i, u := range p.units {
		if others := append(slices.Clone(scans[:i]), scans[i+1:]...); len(others) > 0 {
			u.scan = csrc.ScanIn(u.code, p.macros, others...)
		}
		final[i] = u.scan
	}
	csrc.MarkHostOnlyWith(p.hostHeaders(), entryNames, final...)
	for i, u := range p.units {
		others := append(slices.Clone(scans[:i]), scans[i+1:]...)
		u.compiled = u.scan
		if blanked := csrc.Blank(u.code, u.scan); blanked != u.code {
			u.compiled = csrc.ScanIn(blanked, p.macros, others...)
		}
	}
}

// hostHeaders tells csrc.MarkHostOnlyWith whether the program includes a
// system header served as a stub that declares nothing (pthread.h,
// stdio.h, windows.h: a type none of the files declares may be that
// header's), and which names device code gets all the same: the stubs'
// and the prelude's; and, where it includes PyTorch's headers, what their
// stubs declare under c10::, at:: and torch:: (read from the stubs' text,
// torchScalarTypes and the rest: a name it never mentions, they do not
// declare).
func (p *prepared) hostHeaders() csrc.HostHeaders {
	known, torch := map[string]bool{}, map[string]bool(nil)
	for _, n := range stdintNames {
		known[n] = true
	}
	for _, td := range glibcTypedefs {
		known[td[0]] = true
	}
	var h csrc.HostHeaders
	for _, hdr := range p.system {
		text, ok := cudaStub(hdr, p.toolkit)
		if !ok {
			continue
		}
		declares := false
		if isTorchHeader(hdr) && torch == nil {
			torch = map[string]bool{}
		}
		for _, t := range csrc.Tokenize(strings.ReplaceAll(text, "namespace std {}", "")) {
			if t.Kind == csrc.Ident {
				known[t.Text], declares = true, true
				if isTorchHeader(hdr) {
					torch[t.Text] = true
				}
			}
		}
		h.Stubbed = h.Stubbed || !declares
	}
	h.Known = func(name string) bool { return known[name] }
	if torch != nil {
		h.Torch = func(name string) bool { return torch[name] }
	}
	return h
}

// fileKey is the name that tells two paths of one file apart from two
// files: the absolute path. With the manifest in the working directory,
// an include_dirs entry of ".." reaches "sub/common.cuh" as
// "../sub/common.cuh" while a header beside it says "common.cuh": one
// #pragma once file under two names, compiled twice (ggml's rope.cu).
func fileKey(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return filepath.Clean(path)
}

// findLocal finds the file an #include names: "x.h" beside the including
// file, then (either form) in the manifest's include_dirs.
func findLocal(d csrc.Directive, dir string, dirs []string, read func(string) ([]byte, error)) (string, []byte) {
	var candidates []string
	if !d.System {
		candidates = append(candidates, filepath.Join(dir, d.Include))
	}
	for _, id := range dirs {
		candidates = append(candidates, filepath.Join(id, d.Include))
	}
	for _, c := range candidates {
		if b, err := read(c); err == nil {
			return c, b
		}
	}
	return "", nil
}

// inject decides how one name reaches the source.
func (p *prepared) inject(o offer) Injection {
	in := Injection{Name: o.name, How: InjectUnused}
	if u, line := p.firstMention(p.units[0], o.name, false, map[*unit]bool{}); u != nil {
		p.insertAt(u, line, o.name)
		wins, value := redefinesAt(u.scan, line, o.name)
		return Injection{Name: o.name, How: InjectMacro, File: u.path, Line: line, SourceWins: wins, SourceValue: value}
	}
	for _, u := range p.units {
		if d, ok := u.compiled.Declared(o.name); ok {
			return Injection{Name: o.name, How: InjectDeclared, File: u.path, Line: d.Line}
		}
	}
	u, line := p.firstMention(p.units[0], o.name, true, map[*unit]bool{})
	if u == nil {
		return in
	}
	if o.kind == offerDefine { // a macro has no constexpr form: define it before its first use
		p.insertAt(u, line, o.name)
		return Injection{Name: o.name, How: InjectMacro, File: u.path, Line: line}
	}
	in = Injection{Name: o.name, How: InjectConstexpr, Hidden: true}
	for _, u := range p.units {
		if u.compiled.FirstUse(o.name) == 0 {
			continue
		}
		hidden, fn, tparam := u.compiled.HiddenBy(o.name)
		in.Hidden = in.Hidden && hidden
		if in.HiddenIn == "" {
			in.HiddenIn, in.HiddenByTemplate = fn, tparam
		}
	}
	if !in.Hidden {
		in.HiddenIn, in.HiddenByTemplate = "", false
	}
	return in
}

// redefinesAt says whether the live directive on line of f #defines or
// #undefs name (and the value it defines): as the first preprocessor line
// to mention it, no #ifndef guards it, so a macro mltop defines before it
// is replaced.
func redefinesAt(f *csrc.File, line int, name string) (bool, string) {
	for _, d := range f.Directives {
		if d.Line == line && !d.Dead {
			if d.Defines == name {
				return true, strings.TrimSpace(d.Value)
			}
			return d.Kind == "undef" && slices.Contains(d.Tests, name), ""
		}
	}
	return false, ""
}

// firstMention walks the translation unit in order (headers at their
// #include) for the first live preprocessor line that tests or #defines
// name, or (anyUse) the first line that mentions it at all.
func (p *prepared) firstMention(u *unit, name string, anyUse bool, seen map[*unit]bool) (*unit, int) {
	seen[u] = true
	use := 0
	if anyUse {
		use = u.compiled.FirstUse(name)
	}
	for i, d := range u.scan.Directives {
		if use > 0 && use <= d.Line {
			return u, use
		}
		if d.Dead {
			continue
		}
		if d.Defines == name || slices.Contains(d.Tests, name) {
			return u, d.Line
		}
		if v := u.local[i]; v != nil && !seen[v] {
			if w, line := p.firstMention(v, name, anyUse, seen); w != nil {
				return w, line
			}
		}
	}
	if use > 0 {
		return u, use
	}
	return nil, 0
}

// insertAt notes a macro to define before line of u (moved up to a line
// that starts outside comments and literals).
func (p *prepared) insertAt(u *unit, line int, name string) {
	for line > 1 && !u.scan.CleanLine(line) {
		line--
	}
	if p.inserts[u] == nil {
		p.inserts[u] = map[int][]string{}
	}
	p.inserts[u][line] = append(p.inserts[u][line], name)
}

// Injections lists how each name mltop offers reaches the source in lang
// ("cuda" or "metal"), sorted by name; nil when there is no such source.
func (f *Family) Injections(lang string) []Injection {
	p := f.prep[lang]
	if p == nil {
		return nil
	}
	var out []Injection
	for _, n := range slices.Sorted(mapsKeys(p.plan)) {
		out = append(out, p.plan[n])
	}
	return out
}

// localHeaders are the paths of the local headers the sources include
// (what a watcher watches besides the sources).
func (f *Family) localHeaders() []string {
	var out []string
	for _, lang := range []string{"cuda", "metal"} {
		if p := f.prep[lang]; p != nil {
			for _, u := range p.units[1:] {
				if !slices.Contains(out, u.path) {
					out = append(out, u.path)
				}
			}
		}
	}
	return out
}

// joinLines is lines with a newline after each.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// SourceMacros are the object-like #defines of lang's source and its local
// headers (name → replacement text; the main file's last, so they win), for
// messages that turn a source's sizes into numbers. A name mltop gives the
// source (a knob the source defaults with #ifndef WG / #define WG 64) is
// left out: mltop defines it first, with each spec's value.
func (f *Family) SourceMacros(lang string) map[string]string {
	p := f.prep[lang]
	if p == nil || len(p.units) == 0 {
		return map[string]string{}
	}
	macros := p.objectMacros()
	for name := range p.plan {
		delete(macros, name)
	}
	return macros
}

// objectMacros are the object-like #defines of p's files, its local
// headers first and the main file last (csrc.ObjectMacros).
func (p *prepared) objectMacros() map[string]string {
	scans := make([]*csrc.File, 0, len(p.units))
	for _, u := range p.units[1:] {
		scans = append(scans, u.scan)
	}
	return csrc.ObjectMacros(append(scans, p.units[0].scan)...)
}
