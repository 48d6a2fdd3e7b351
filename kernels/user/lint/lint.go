// Package lint is `mltop check`: it validates user kernels without a GPU.
// For each manifest a path names it loads the manifest (a broken one is
// reported and the others still checked), lints the sources against it,
// compiles them where a compiler is present (NVRTC for CUDA, g++ against
// the MSL emulation for Metal) and runs the Python reference on a tiny
// shape. Each step's findings carry a level, a place and what to do.
package lint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Level is how serious a finding is.
type Level int

const (
	Note    Level = iota // what mltop does or did not check
	Warning              // likely a mistake, the kernel still runs
	Error                // the kernel will not load, compile or check
)

func (l Level) String() string { return [...]string{"note", "warning", "error"}[l] }

// Steps, in the order they run.
const (
	StepLoad      = "load"
	StepSource    = "source"
	StepPlan      = "plan"
	StepCompile   = "compile"
	StepReference = "reference"
)

// Finding is one thing a step found.
type Finding struct {
	Level     Level
	Step      string
	File      string // "" when it concerns the manifest as a whole
	Line, Col int
	Msg       string
}

// Where is "file:line:col", "file" or "".
func (f Finding) Where() string {
	switch {
	case f.File == "":
		return ""
	case f.Line == 0:
		return f.File
	case f.Col == 0:
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Col)
}

// String is "level [step] where: message", continuation lines indented.
func (f Finding) String() string {
	w := f.Where()
	if w != "" {
		w += ": "
	}
	msg := strings.ReplaceAll(strings.TrimRight(f.Msg, "\n"), "\n", "\n      ")
	return fmt.Sprintf("%-7s [%s] %s%s", f.Level, f.Step, w, msg)
}

// Result is the check of one manifest.
type Result struct {
	Manifest string
	Family   *user.Family // nil when the manifest does not load
	Findings []Finding
	// Unchecked are the steps skipped for want of a tool, as the verdict
	// says them: "not compiled (no NVRTC)", "reference not run (no NumPy)".
	Unchecked []string
	// Unrunnable says that a default spec asks for more than the hard
	// limit every GPU of its language shares (1024 threads per group): the
	// manifest loads, but what it describes runs nowhere, so the check
	// exits 2, as for bad input.
	Unrunnable bool
	// BadArch: the CUDA architecture the check compiles for (Options.Arch)
	// is one the NVRTC here does not know: bad input, so the check exits 2.
	BadArch bool
	// Stopped is why the check stopped before its steps ended ("terminated
	// (SIGTERM)", "cancelled by user"): the steps cut short say so, not a
	// compiler's or Python's failure; "" when it ran to the end.
	Stopped string
	// unplanned: a default spec does not plan (the reference step, which
	// plans the same spec, is not run)
	unplanned bool
}

// stop records that the check was stopped while step ran (what: "CUDA
// f16: row_sum<__half, 256> not compiled") and says so, once per step.
func (r *Result) stop(opt Options, step, file, what string) {
	r.Stopped = run.CancelReason(opt.ctx())
	r.add(Note, step, file, 0, 0, "%s: the check was stopped (%s) before it finished", what, r.Stopped)
}

// skip records a step not run for want of a tool (once per wording).
func (r *Result) skip(what string) {
	if !slices.Contains(r.Unchecked, what) {
		r.Unchecked = append(r.Unchecked, what)
	}
}

// Broken says whether the manifest does not load (exit 2).
func (r Result) Broken() bool { return r.Family == nil || r.has(Error, StepLoad) }

// Failed says whether a source, compile or reference step found an error
// (exit 1).
func (r Result) Failed() bool {
	for _, f := range r.Findings {
		if f.Level == Error && f.Step != StepLoad {
			return true
		}
	}
	return false
}

// Passed says whether the verdict is ok (with or without steps skipped
// for want of a tool).
func (r Result) Passed() bool {
	return !r.Broken() && !r.Unrunnable && !r.BadArch && !r.Failed() && r.Stopped == ""
}

func (r Result) has(l Level, step string) bool {
	for _, f := range r.Findings {
		if f.Level == l && f.Step == step {
			return true
		}
	}
	return false
}

// Count counts the findings of a level.
func (r Result) Count(l Level) int {
	n := 0
	for _, f := range r.Findings {
		if f.Level == l {
			n++
		}
	}
	return n
}

// Report is the check of every manifest a path names.
type Report struct {
	Path      string
	Manifests []Result
}

// ExitCode is 2 when a manifest is broken or unrunnable, or the arch
// unknown to NVRTC (or none was found), else 1 when a step failed, else 0.
func (r Report) ExitCode() int {
	code := 0
	if len(r.Manifests) == 0 {
		return 2
	}
	for _, m := range r.Manifests {
		if m.Broken() || m.Unrunnable || m.BadArch {
			return 2
		}
		if m.Failed() {
			code = 1
		}
	}
	return code
}

// Loaded are the families of the manifests that load.
func (r Report) Loaded() []*user.Family {
	var out []*user.Family
	for _, m := range r.Manifests {
		if !m.Broken() {
			out = append(out, m.Family)
		}
	}
	return out
}

// Write prints the report: per manifest its findings at or above min,
// then a verdict line.
func (r Report) Write(w io.Writer, min Level) {
	for i, m := range r.Manifests {
		if i > 0 {
			fmt.Fprintln(w)
		}
		name := "not loaded"
		if m.Family != nil {
			name = m.Family.Name()
		}
		fmt.Fprintf(w, "%s (%s)\n", m.Manifest, name)
		for _, f := range m.Findings {
			if f.Level >= min {
				fmt.Fprintf(w, "  %s\n", f)
			}
		}
		fmt.Fprintf(w, "  => %s\n", m.Verdict())
	}
}

// Verdict is one line: broken, failed, or ok, with the counts.
func (r Result) Verdict() string {
	counts := profiler.Plural(r.Count(Error), "error", "errors") + ", " + profiler.Plural(r.Count(Warning), "warning", "warnings") + ", " + profiler.Plural(r.Count(Note), "note", "notes")
	switch {
	case r.Broken():
		return "broken: the manifest does not load (" + counts + ")"
	case r.Unrunnable:
		return "unrunnable: its default spec runs on no GPU (" + counts + ")"
	case r.BadArch:
		return "not compiled: this NVRTC does not know the architecture asked (" + counts + ")"
	case r.Failed():
		return "failed (" + counts + ")"
	case r.Stopped != "":
		return "stopped (" + r.Stopped + ") before every step ran (" + counts + ")"
	}
	if len(r.Unchecked) > 0 {
		// "ok" alone would read as compiled and verified
		return "ok, but " + joinAnd(r.Unchecked) + " (" + counts + ")"
	}
	return "ok (" + counts + ")"
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Options say what Check does.
type Options struct {
	// Context stops the checks (ctrl-C); nil means context.Background().
	Context context.Context
	// Static limits the check to loading and the source lint (mltop list).
	Static bool
	// StepTimeout bounds each compile and each reference run (default 2 min).
	StepTimeout time.Duration
	// Arch is the CUDA architecture to compile for (cuda.DefaultCheckArch
	// when "").
	Arch string
	// CompileCUDA and CompileMetal replace the compilers (tests); nil uses
	// cuda.CheckCompile and the MSL emulation.
	CompileCUDA  func(p profiler.Program, arch string) (cuda.CompileReport, error)
	CompileMetal func(ctx context.Context, p profiler.Program) error
	// Python is the interpreter for references; "" probes $MLTOP_PYTHON or
	// python3 (and notes when it or NumPy is missing).
	Python string
}

func (o Options) ctx() context.Context {
	if o.Context == nil {
		return context.Background()
	}
	return o.Context
}

func (o Options) timeout() time.Duration {
	if o.StepTimeout <= 0 {
		return 2 * time.Minute
	}
	return o.StepTimeout
}

// Check checks the manifest path names, or every kernel.yaml under the
// folder it names. A manifest that does not load is reported and the
// others are still checked; two manifests of one name are both reported.
func Check(path string, opt Options) Report {
	rep := Report{Path: path}
	ms, err := user.Manifests(path)
	if err != nil {
		rep.Manifests = append(rep.Manifests, Result{Manifest: path, Findings: []Finding{errFinding(StepLoad, path, err)}})
		return rep
	}
	var loaded []Result
	for _, m := range ms {
		if opt.ctx().Err() != nil {
			break
		}
		loaded = append(loaded, load(m))
	}
	markClashes(path, loaded)
	for _, r := range loaded {
		if opt.ctx().Err() != nil {
			break
		}
		if r.Family != nil && !r.Broken() {
			lintSources(&r)
			if !opt.Static {
				plans := planStep(&r)
				compileStep(&r, opt, plans)
				if opt.ctx().Err() != nil {
					if r.Stopped == "" {
						r.stop(opt, StepReference, r.Manifest, "reference not run")
					}
				} else {
					referenceStep(&r, opt)
				}
			}
		}
		rep.Manifests = append(rep.Manifests, r)
	}
	return rep
}

// markClashes reports manifests of one check (under root) that give their
// kernels the same name. Which one is wrong must not hang on how the paths
// sort (a copy of a folder often sorts first): where exactly one of them
// is outside a path that says "broken" (examples/row_sum beside
// examples/row_sum_broken), it keeps the name and the others are refused;
// otherwise each is refused, naming all of them.
func markClashes(root string, rs []Result) {
	byName := map[string][]int{}
	var names []string
	for i, r := range rs {
		if r.Family == nil {
			continue
		}
		n := r.Family.Name()
		if byName[n] == nil {
			names = append(names, n)
		}
		byName[n] = append(byName[n], i)
	}
	for _, n := range names {
		idx := byName[n]
		if len(idx) < 2 {
			continue
		}
		var keep []int
		var paths []string
		for _, i := range idx {
			paths = append(paths, rs[i].Manifest)
			if !saysBroken(root, rs[i].Manifest) {
				keep = append(keep, i)
			}
		}
		for _, i := range idx {
			r := &rs[i]
			line, col := r.Family.Pos("$.name")
			switch {
			case len(keep) == 1 && keep[0] == i:
				continue
			case len(keep) == 1:
				r.add(Error, StepLoad, r.Manifest, line, col, "%s is also the name of the kernel in %s, which keeps it (its path does not say broken): give this manifest its own name, e.g. %s_broken", n, rs[keep[0]].Manifest, n)
			default:
				others := slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return p == r.Manifest })
				r.add(Error, StepLoad, r.Manifest, line, col, "%s is also the name of the kernel in %s: no manifest of that name loads until each has its own name (a copied folder keeps the original's name:)", n, strings.Join(others, ", "))
			}
		}
	}
}

// saysBroken: the manifest's path below root names "broken" (a folder
// broken/, row_sum_broken/).
func saysBroken(root, manifest string) bool {
	rel, err := filepath.Rel(root, manifest)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = manifest
	}
	return strings.Contains(strings.ToLower(filepath.Dir(rel)), "broken")
}

// load loads a manifest.
func load(path string) Result {
	r := Result{Manifest: path}
	f, err := user.Load(path)
	if err != nil {
		r.Findings = append(r.Findings, errFinding(StepLoad, path, err))
		return r
	}
	r.Family = f
	line, col := f.Pos("$.name")
	if fam, err := profiler.Lookup(f.Name()); err == nil {
		if _, isUser := fam.(*user.Family); !isUser {
			r.add(Error, StepLoad, path, line, col, "%s is a built-in family: pick another name", f.Name())
		}
	}
	for _, k := range f.ImpliedShapeKnobs() {
		r.add(Note, StepLoad, path, k.Line, k.Col, "knob %s is in the shape of buffer %s, so it is a shape knob: each of its values gets its own inputs and reference; write `shape: true` on %s to say so", k.Knob, k.Buffer, k.Knob)
	}
	if text, err := os.ReadFile(path); err == nil {
		if lines := todoLines(string(text)); len(lines) > 0 {
			where := "line "
			if len(lines) > 1 {
				where = "lines "
			}
			r.add(Warning, StepLoad, path, lines[0], 0, "%s left (%s%s): each marks a guess of `mltop new` (a shape, the grid, a value, the check); make it right and delete the TODO", profiler.Plural(len(lines), "TODO", "TODOs"), where, joinInts(lines))
		}
	}
	return r
}

// todoRE is a TODO mark (not "the TODOs" of new's header line).
var todoRE = regexp.MustCompile(`\bTODO\b`)

// todoLines are the 1-based lines of a manifest that hold a TODO (the
// marks `mltop new` leaves on its guesses).
func todoLines(text string) []int {
	var out []int
	for i, l := range strings.Split(text, "\n") {
		if todoRE.MatchString(l) {
			out = append(out, i+1)
		}
	}
	return out
}

// joinInts is "3, 5 and 9".
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return joinAnd(s)
}

func (r *Result) add(l Level, step, file string, line, col int, format string, a ...any) {
	r.Findings = append(r.Findings, Finding{Level: l, Step: step, File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)})
}

// errFinding is an error finding of err, at its manifest position when it
// is a manifest error.
func errFinding(step, file string, err error) Finding {
	var ue *user.Error
	if errors.As(err, &ue) {
		msg := ue.Msg
		if ue.Field != "" {
			msg = ue.Field + ": " + msg
		}
		return Finding{Level: Error, Step: step, File: ue.File, Line: ue.Line, Col: ue.Col, Msg: msg}
	}
	return Finding{Level: Error, Step: step, File: file, Msg: err.Error()}
}
