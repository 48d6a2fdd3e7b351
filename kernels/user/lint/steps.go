package lint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// langName is how findings name a source language.
var langName = map[string]string{"cuda": "CUDA", "metal": "Metal"}

// lintSources checks what loading does not: the entries' places, the TGM
// items against the sources' shared arrays, and the names mltop injects.
// (Entries, and args against their parameters, are the loader's checks.)
func lintSources(r *Result) {
	f := r.Family
	lintDTypes(r)
	noteSourceConstants(r)
	for _, lang := range f.Languages() {
		path := f.SourcePath(lang)
		code := f.Source(lang)
		// the shared arrays of entries and helpers in local headers too
		withHeaders := f.SourceWithHeaders(lang)
		shared := sharedNames(withHeaders)
		lintUnsizedShared(r, lang, withHeaders)
		where, have := filepath.Base(path)+" declares", "it has"
		if withHeaders != code {
			where, have = filepath.Base(path)+" and its local headers declare", "they have"
		}
		for _, d := range f.DispatchInfos() {
			if sig, file, ok := f.EntryAt(lang, d.Index); ok {
				r.add(Note, StepSource, file, sig.Line, 0, "entry %s", sig)
				lintThreadgroupParams(r, d, sig)
			}
			for k, item := range d.TGM {
				if shared[item] {
					continue
				}
				line, col := f.Pos(fmt.Sprintf("$.dispatches[%d].tgm[%d].name", d.Index, k))
				r.add(Warning, StepSource, f.Path(), line, col,
					"TGM item %s of dispatch %s: %s no %s array named %s (%s %s): name the item after the array it sizes, or drop it if nothing uses it",
					item, d.Name, where, sharedKeyword(lang), item, have, orNone(slices.Sorted(mapKeys(shared))))
			}
		}
		if lang == "cuda" {
			noteSymbols(r)
			lintGridSync(r, code)
		}
		for _, n := range f.StructNotes(lang) {
			r.add(Note, StepSource, path, 0, 0, "%s", n)
		}
		// only what reaches the source or what the source shadows: an unused
		// name (every DTYPE_* but one, a knob host code alone reads) is noise
		var lines []string
		for _, in := range f.Injections(lang) {
			if in.How != user.InjectUnused {
				lines = append(lines, in.String())
			}
			if in.SourceWins && !onlySourceValue(f.Schema(), in) {
				r.add(Warning, StepSource, in.File, in.Line, 0, "%s", in.String())
			}
		}
		if len(lines) > 0 {
			r.add(Note, StepSource, path, 0, 0, "names mltop gives the %s source:\n%s", langName[lang], strings.Join(lines, "\n"))
		}
	}
}

// noteSourceConstants lists the source's constants the manifest's
// expressions use, with their values: what the grid or a shape was
// computed from.
func noteSourceConstants(r *Result) {
	var lines []string
	for _, c := range r.Family.SourceConstants() {
		lines = append(lines, c.String())
	}
	if len(lines) > 0 {
		r.add(Note, StepSource, r.Family.Path(), 0, 0, "source constants the manifest uses:\n%s", strings.Join(lines, "\n"))
	}
}

// lintThreadgroupParams warns about a Metal entry's `threadgroup T*
// [[threadgroup(i)]]` parameter that gets no memory (mltop sets the
// dispatch's dynamic_tgm at index 0 and nothing at any other index), and
// about one a tgm: item counts a second time beside dynamic_tgm.
func lintThreadgroupParams(r *Result, d user.DispatchInfo, sig csrc.Signature) {
	f := r.Family
	for _, p := range sig.Params {
		if !strings.HasPrefix(p.Attr, "threadgroup(") {
			continue
		}
		line, col := f.Pos(fmt.Sprintf("$.dispatches[%d]", d.Index))
		switch {
		case p.Attr != "threadgroup(0)":
			r.add(Warning, StepSource, f.Path(), line, col,
				"dispatch %s: parameter %s [[%s]] gets no threadgroup memory: mltop sets dynamic_tgm at index 0 only; use [[threadgroup(0)]]", d.Name, p.Name, p.Attr)
		case !d.DynamicTGM:
			r.add(Warning, StepSource, f.Path(), line, col,
				"dispatch %s: parameter %s [[threadgroup(0)]] is threadgroup memory sized at dispatch, but the dispatch sets no dynamic_tgm: add `dynamic_tgm: <bytes>` (e.g. \"WG * 4\" for a float per thread)", d.Name, p.Name)
		case slices.Contains(d.TGM, p.Name):
			r.add(Warning, StepSource, f.Path(), line, col,
				"dispatch %s lists the threadgroup parameter %s [[threadgroup(0)]] as a tgm: item and sets dynamic_tgm: the TGM budget and its limit count those bytes twice; drop the tgm: item (dynamic_tgm is its line)", d.Name, p.Name)
		}
	}
}

// lintDTypes warns when dtypes: lists several dtypes but no buffer holds
// the spec's dtype: every spec then runs on the same data.
func lintDTypes(r *Result) {
	f := r.Family
	dts := f.Schema().DTypes
	if len(dts) < 2 || len(f.DTypeBuffers()) > 0 {
		return
	}
	names := make([]string, len(dts))
	for i, dt := range dts {
		names[i] = string(dt)
	}
	line, col := f.Pos("$.dtypes")
	r.add(Warning, StepSource, f.Path(), line, col,
		"dtypes: lists %s, but no buffer has dtype %s (each names a fixed dtype): every dtype runs the same data, so the specs differ in name only; give the buffers the kernel's dtype (dtype: %s) or list one dtype",
		strings.Join(names, ", "), f.DTypeName(), f.DTypeName())
}

func sharedKeyword(lang string) string {
	if lang == "metal" {
		return "threadgroup"
	}
	return "__shared__"
}

// sharedNames are the names declared after __shared__ or threadgroup: the
// identifier before the first '[', ';', '=', ',' or ')' that follows.
func sharedNames(code string) map[string]bool {
	toks := csrc.Tokenize(code)
	out := map[string]bool{}
	for i, t := range toks {
		if t.Text != "__shared__" && t.Text != "threadgroup" {
			continue
		}
	scan:
		for j := i + 1; j < len(toks) && j < i+64; j++ {
			switch toks[j].Text {
			case "(": // __align__(16), alignas(16): not the name
				j = csrc.Matching(toks, j)
				continue
			case "[":
				if p := toks[j-1]; p.Kind == csrc.Ident {
					out[p.Text] = true
				}
				for j < len(toks) && toks[j].Text == "[" { // its extents
					for j < len(toks) && toks[j].Text != "]" {
						j++
					}
					j++
				}
				if j >= len(toks) || toks[j].Text != "," {
					break scan
				}
				// `__shared__ float r[_N_], k[_N_];` (RWKV's wkv): the next one
			case ",":
				if p := toks[j-1]; p.Kind == csrc.Ident {
					out[p.Text] = true
				}
			case "[[", ";", "=", ")":
				if p := toks[j-1]; p.Kind == csrc.Ident {
					out[p.Text] = true
				}
				break scan
			}
		}
	}
	return out
}

// compileStep compiles every program of the default spec of each dtype
// (a language whose default spec does not plan is left out: planStep
// said why).
func compileStep(r *Result, opt Options, plans map[string]planned) {
	f := r.Family
	start := len(r.Findings)
	defer func() { r.Findings = append(r.Findings[:start], mergeDTypes(r.Findings[start:])...) }()
	for _, lang := range f.Languages() {
		pl, ok := plans[lang]
		if !ok {
			continue
		}
		for i, p := range pl.progs {
			if opt.ctx().Err() != nil {
				r.stop(opt, StepCompile, p.File, fmt.Sprintf("%s %s: %s not compiled", langName[lang], pl.dts[i], p.Entry))
				return
			}
			var skip bool
			if lang == "cuda" {
				skip = compileCUDA(r, opt, p, pl.dts[i], pl.disps[i])
			} else {
				skip = compileMetal(r, opt, p, pl.dts[i])
			}
			if skip {
				break
			}
		}
	}
}

// noNVRTC says whether CheckCompile failed for want of NVRTC (or of Linux).
func noNVRTC(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "NVRTC not found") || strings.Contains(s, "needs Linux")
}

// compileCUDA compiles one CUDA program; it returns true when there is no
// compiler (the other programs are skipped).
func compileCUDA(r *Result, opt Options, p profiler.Program, dt profiler.DType, d0 profiler.Dispatch) bool {
	compile := opt.CompileCUDA
	if compile == nil {
		compile = cuda.CheckCompile
	}
	type done struct {
		rep cuda.CompileReport
		err error
	}
	ch := make(chan done, 1)
	go func() { // NVRTC cannot be interrupted: stop waiting for it instead
		rep, err := compile(p, opt.Arch)
		ch <- done{rep, err}
	}()
	ctx, cancel := context.WithTimeout(opt.ctx(), opt.timeout())
	defer cancel()
	var d done
	select {
	case d = <-ch:
	case <-ctx.Done():
		if opt.ctx().Err() != nil { // ctrl-C or SIGTERM, not the step's time limit
			r.stop(opt, StepCompile, p.File, fmt.Sprintf("CUDA %s: %s not compiled", dt, p.Entry))
			return true
		}
		r.add(Error, StepCompile, p.File, 0, 0, "CUDA %s: NVRTC did not finish %s within the %s a compile step may take", dt, p.Entry, opt.timeout())
		return true
	}
	if d.err != nil && noNVRTC(d.err) {
		r.add(Note, StepCompile, p.File, 0, 0, "CUDA: not compiled: %v", d.err)
		r.skip("not compiled (no NVRTC)")
		return true
	}
	var archErr *cuda.ArchError
	if errors.As(d.err, &archErr) { // the check's own option: once, and exit 2
		r.add(Error, StepCompile, p.File, 0, 0, "CUDA: %v", archErr)
		r.BadArch = true
		return true
	}
	if d.err != nil {
		log := logText(d.rep.Log)
		if strings.Contains(d.err.Error(), strings.TrimSpace(d.rep.Log)) {
			log = "" // the error quotes NVRTC's log already: print it once
		}
		r.add(Error, StepCompile, p.File, 0, 0, "CUDA %s: %s%s%s%s", dt, withIncludesBehind(d.err.Error(), r.Family.IncludesBehindErrors(d.rep.Log)), log, buildMacroHint(d.err.Error()+"\n"+d.rep.Log, r.Family.SourceWithHeaders("cuda")), missingHeadersHint(r.Family.MissingLocalHeaders()))
		return false
	}
	if warns := withoutUnusedFunctions(d.rep.Log); warns != "" {
		r.add(Warning, StepCompile, p.File, 0, 0, "CUDA %s: NVRTC warns:%s", dt, logText(warns))
	}
	shared := ""
	if d.rep.StaticShared >= 0 {
		shared = fmt.Sprintf(", %d B static shared", d.rep.StaticShared)
		if d.rep.ReservedShared > 0 {
			shared += fmt.Sprintf(" + %d B the compiler reserves for the system", d.rep.ReservedShared)
		}
	}
	with := d.rep.Compiler
	if d.rep.Headers != "" {
		with += ", " + d.rep.Headers
	}
	r.add(Note, StepCompile, p.File, 0, 0, "CUDA %s: %s compiles for %s with %s (lowered %s%s)", dt, p.Entry, d.rep.Arch, with, d.rep.Lowered, shared)
	lintTGMItems(r, d0, d.rep.StaticShared, dt)
	return false
}

// lintTGMItems warns when a dispatch's tgm: items do not add up to the
// shared memory the compiler reports (static) plus its dynamic_tgm, by
// the rule a run's budget warns by (run.TGMItemsDisagree): the budget and
// occupancy mltop shows come from the items. Where it has no items the
// source lint has suggested them already.
func lintTGMItems(r *Result, d profiler.Dispatch, static int, dt profiler.DType) {
	if !run.TGMItemsDisagree(&d, static) {
		return
	}
	line, col := dispatchPos(r.Family, d.Name)
	r.add(Warning, StepCompile, r.Family.Path(), line, col, "dispatch %s at %s: its tgm: items sum to %d B (%s), but the compiler reports %d B static shared + %d B dynamic_tgm = %d B: the TGM budget and occupancy mltop shows come from the items; make each item the bytes of its array", d.Name, dt, d.TGMBytes(), d.TGMParts(), static, d.DynamicTGM, static+d.DynamicTGM)
}

// withIncludesBehind puts, after the first line of a compile error whose
// errors all lie in headers the source includes (user.Family.IncludesBehindErrors),
// the #include lines that bring them in.
func withIncludesBehind(msg string, includes []string) string {
	if len(includes) == 0 {
		return msg
	}
	first, rest, _ := strings.Cut(msg, "\n")
	hint := "every error lies in headers brought in by " + strings.Join(includes, "; ") + ", not in the source's own files: " +
		"NVRTC compiles device code only; if only host code needs such a header, wrap its #include in #ifndef __CUDACC_RTC__ … #endif"
	if rest == "" {
		return first + "\n" + hint
	}
	return first + "\n" + hint + "\n" + rest
}

// undefinedIdent is NVRTC's error for a name nothing declares.
var undefinedIdent = regexp.MustCompile(`identifier "([A-Za-z_]\w*)" is undefined`)

// buildMacroHint says, after a failed compile, which undefined names the
// source uses as values but never #defines: macros its build passes
// (RWKV's wkv kernels take -D_N_=64, their head size), which the manifest
// gives as knobs or defines. A name the source calls (a function) is left
// out.
func buildMacroHint(log, code string) string {
	var names []string
	for _, m := range undefinedIdent.FindAllStringSubmatch(log, -1) {
		n := m[1]
		if slices.Contains(names, n) {
			continue
		}
		q := regexp.QuoteMeta(n)
		if !regexp.MustCompile(`\b`+q+`\b\s*[^\s(\w]`).MatchString(code) ||
			regexp.MustCompile(`(?m)^\s*#\s*define\s+`+q+`\b`).MatchString(code) {
			continue
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	n, it := names[0], "it"
	if len(names) > 1 {
		it = "them"
	}
	return fmt.Sprintf("\n%s: no file the source includes defines %s: a macro its build passes (nvcc -D%s=…)? "+
		"give %s in kernel.yaml as a knob (`knobs: {%s: {values: [64], shape: true}}`, swept and declared ahead of the source) or a fixed `defines: {%s: 64}`",
		strings.Join(names, ", "), it, n, it, n, n)
}

// missingHeadersHint says, after a failed compile, which quoted headers
// were found nowhere and served empty: a name NVRTC misses may be theirs.
func missingHeadersHint(missing []string) string {
	if len(missing) == 0 {
		return ""
	}
	return "\nnot found, so served empty (found neither beside the including file nor in include_dirs:): " + strings.Join(missing, "; ") +
		": if NVRTC misses a name one of them declares, add its folder to include_dirs: in kernel.yaml (a header only host code needs can stay missing)"
}

func logText(log string) string {
	if log = strings.TrimSpace(log); log == "" {
		return ""
	}
	return "\n" + log
}

// compileMetal compiles one Metal program on the MSL emulation; true when
// there is no g++.
func compileMetal(r *Result, opt Options, p profiler.Program, dt profiler.DType) bool {
	compile := opt.CompileMetal
	if compile == nil {
		compile = mslemu.CheckUser
	}
	ctx, cancel := context.WithTimeout(opt.ctx(), opt.timeout())
	defer cancel()
	err := compile(ctx, p)
	switch {
	case err != nil && opt.ctx().Err() != nil: // ctrl-C or SIGTERM killed g++
		r.stop(opt, StepCompile, p.File, fmt.Sprintf("Metal %s: %s not compiled", dt, p.Entry))
		return true
	case errors.Is(err, mslemu.ErrNoCompiler):
		r.add(Note, StepCompile, p.File, 0, 0, "Metal: %v", err)
		r.skip("not compiled (no g++)")
		return true
	case errors.Is(err, mslemu.ErrAppleBuiltins):
		r.add(Note, StepCompile, p.File, 0, 0, "Metal %s: %v", dt, err)
		r.skip("not compiled (Apple's builtins)")
		return true
	case errors.Is(err, mslemu.ErrSwizzles):
		r.add(Note, StepCompile, p.File, 0, 0, "Metal %s: %v", dt, err)
		r.skip("not compiled on the emulation (swizzles)")
		return true
	case err != nil:
		r.add(Error, StepCompile, p.File, 0, 0, "Metal %s: %v", dt, err)
		return false
	}
	r.add(Note, StepCompile, p.File, 0, 0, "Metal %s: %s compiles on the MSL emulation (g++); Apple's Metal compiler is not run here", dt, p.Entry)
	return false
}

// referenceStep runs the Python reference on a tiny spec, or says what
// the check is.
func referenceStep(r *Result, opt Options) {
	f := r.Family
	line, col := f.Pos("$.check")
	switch f.CheckKind() {
	case "none":
		r.add(Note, StepReference, f.Path(), line, col, "check: none: runs are `unchecked` (add check: {python: ref.py} to verify the outputs)")
		return
	case "against", "kernel":
		r.add(Note, StepReference, f.Path(), line, col, "check: %s: compared on a device when it runs; nothing to run here", f.CheckKind())
		return
	}
	if r.unplanned { // the reference plans the same spec: one cause, reported once
		r.add(Note, StepReference, f.PythonRef(), 0, 0, "not run: the default spec does not plan (the [plan] error above)")
		r.skip("reference not run (the default spec does not plan)")
		return
	}
	py := opt.Python
	if py == "" {
		st := pyref.Probe(opt.ctx())
		if !st.OK() && opt.ctx().Err() != nil { // the probe was stopped, not refused
			r.stop(opt, StepReference, f.PythonRef(), "reference not run")
			return
		}
		if !st.OK() {
			r.add(Note, StepReference, f.PythonRef(), 0, 0, "not run: %v", st.Err)
			if st.Path == "" {
				r.skip("reference not run (no Python)")
			} else {
				r.skip("reference not run (no NumPy)")
			}
			return
		}
		py = st.Path
	}
	dt := f.Schema().DTypes[0]
	if slices.Contains(f.Schema().DTypes, profiler.F32) {
		dt = profiler.F32
	}
	s, changed, err := f.TinySpec(dt)
	if err != nil {
		r.add(Error, StepReference, f.Path(), 0, 0, "%v", err)
		return
	}
	ctx, cancel := context.WithTimeout(opt.ctx(), opt.timeout())
	defer cancel()
	outs, problems, err := f.CheckReference(ctx, py, s)
	shape := "the default shape"
	if len(changed) > 0 {
		shape = "a tiny shape (" + strings.Join(changed, ", ") + ")"
	}
	if err != nil && opt.ctx().Err() != nil { // ctrl-C or SIGTERM stopped Python
		r.stop(opt, StepReference, f.PythonRef(), "reference not run to its end")
		return
	}
	if err != nil {
		r.add(Error, StepReference, f.PythonRef(), 0, 0, "on %s: %v", shape, err)
		return
	}
	for _, p := range problems {
		l := Warning
		if p.Error {
			l = Error
		}
		r.add(l, StepReference, f.PythonRef(), 0, 0, "%s", p.Msg)
	}
	var got []string
	for _, o := range outs {
		got = append(got, fmt.Sprintf("%s %v %s", o.Name, o.Shape, o.Descr))
	}
	r.add(Note, StepReference, f.PythonRef(), 0, 0, "ran at %s on %s with %s: returned %s", s.DType, shape, py, orNone(got))
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// noteSymbols says which buffers fill module globals of the CUDA source,
// and where their declared size is checked.
func noteSymbols(r *Result) {
	for _, s := range r.Family.Symbols() {
		when := "when each spec plans"
		if !s.SizeKnown {
			when = "when the GPU loads the module (the source gives no size mltop can read)"
		}
		r.add(Note, StepSource, s.File, s.Line, 0, "buffer %s fills `%s` before each spec's launches; its size is checked %s", s.Buffer, s.Decl, when)
	}
}

// onlySourceValue says whether the knob or dim in names can take only the
// value the source's own #define gives it (a knob of one value, as the
// source has it): then the source replacing it changes nothing.
func onlySourceValue(s profiler.Schema, in user.Injection) bool {
	v, err := strconv.Atoi(in.SourceValue)
	if err != nil {
		return false
	}
	for _, ps := range [][]profiler.Param{s.Knobs, s.Dims} {
		if p, ok := profiler.FindParam(ps, in.Name); ok {
			return len(p.Values) > 0 && !slices.ContainsFunc(p.Values, func(x int) bool { return x != v })
		}
	}
	return false
}
