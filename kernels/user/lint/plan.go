package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// planned are the distinct programs of a language's default specs (one
// per dtype), with the dtype each was made for.
type planned struct {
	progs []profiler.Program
	dts   []profiler.DType
	disps []profiler.Dispatch // the first dispatch of each program
}

// sharedLimits are the per-group limits every GPU of a language shares:
// what a spec must stay within to run anywhere.
type sharedLimits struct {
	threads  int // threads per group
	tgm      int // threadgroup memory without an opt-in
	tgmOptIn int // the most any GPU gives with the opt-in (tgm when there is none)
}

var limitsOf = map[string]sharedLimits{
	"cuda":  {threads: cuda.MaxThreadsPerBlock, tgm: cuda.SharedPerBlockNoOptIn, tgmOptIn: cuda.MaxSharedPerBlockOptIn},
	"metal": {threads: metal.MaxThreadsPerGroup, tgm: metal.TGMPerGroup, tgmOptIn: metal.TGMPerGroup},
}

// planStep plans the default spec of each dtype for each source language
// on a device without limits, then holds each dispatch against the limits
// every GPU of the language shares: first the default spec, then each
// value a knob lists (the others at their defaults). A spec that does not
// plan is an error; a default spec over the threads every GPU allows is
// one too (Unrunnable: no GPU launches it); one over another limit a
// warning (it loads, but no GPU, or only some, run it), as is a listed
// knob value over any limit (the default spec still runs).
func planStep(r *Result) map[string]planned {
	f := r.Family
	out := map[string]planned{}
	for _, lang := range f.Languages() {
		var bounds *boundsReader
		if lang == "cuda" {
			bounds = newBoundsReader(f)
		}
		var pl planned
		seen := map[string]bool{}
		warned := map[string]bool{}
		ok := true
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
			plan, err := f.Plan(s, profiler.DeviceInfo{Backend: lang, Name: "mltop check"})
			if err != nil {
				r.add(Error, StepPlan, f.Path(), 0, 0, "%s: the default spec does not plan: %v", s, err)
				ok, r.unplanned = false, true
				break
			}
			for _, d := range append(plan.Setup, plan.Dispatches...) {
				if key := d.Program.Entry + "\x00" + d.Program.Code; d.Zero == "" && !seen[key] {
					seen[key] = true
					pl.progs = append(pl.progs, d.Program)
					pl.dts = append(pl.dts, dt)
					pl.disps = append(pl.disps, d)
				}
			}
			if f.Validate(s, profiler.DeviceInfo{Backend: lang, Name: "mltop check"}) != nil {
				continue // the rules refuse it: it never runs, whatever the limits
			}
			for _, d := range plan.Dispatches {
				for _, o := range overLimits(lang, d, bounds) {
					if key := d.Name + "\x00" + o.kind; !warned[key] {
						warned[key] = true
						line, col := dispatchPos(f, d.Name)
						level := Warning
						switch o.kind {
						case "threads": // the hard limit: no GPU launches it, whatever it has
							level, r.Unrunnable = Error, true
						case "bounds": // the kernel's own limit: every GPU refuses the launch
							level = Error
						}
						r.add(level, StepPlan, f.Path(), line, col, "dispatch %s: the default spec (%s) %s", d.Name, s, o.msg)
					}
				}
			}
		}
		if ok {
			out[lang] = pl
			lintKnobValues(r, lang, bounds)
			if lang == "cuda" {
				lintCooperativeGrids(r)
			}
		}
	}
	return out
}

// gpuKind names the GPUs of a source language.
var gpuKind = map[string]string{"cuda": "CUDA GPU", "metal": "Apple GPU"}

// overLimit is one limit a dispatch goes over.
type overLimit struct {
	kind string // "threads", "tgm" (over every GPU's limit), "optin" (needs the opt-in)
	msg  string
}

// overLimits are the limits shared by every GPU of lang that d goes over,
// and its entry's __launch_bounds__ (bounds nil: none read).
func overLimits(lang string, d profiler.Dispatch, bounds *boundsReader) []overLimit {
	lim := limitsOf[lang]
	gpus := gpuKind[lang]
	var out []overLimit
	if n := d.Threads(); n > lim.threads {
		out = append(out, overLimit{"threads", fmt.Sprintf(
			"has %d threads per group (threads %v); no %s runs more than %d: lower the threads expression or the knobs it reads", n, d.Group, gpus, lim.threads)})
	} else if lb, v, ok := bounds.of(d); ok && n > v {
		out = append(out, overLimit{"bounds", fmt.Sprintf(
			"has %d threads per group (threads %v), over the %d its entry %s is compiled for by %s: every GPU refuses the launch; lower the threads expression or the knobs it reads to at most %d, or raise the bound",
			n, d.Group, v, lb.sig.Entry, lb.boundText(v), v)})
	}
	tgm := d.TGMBytes()
	what := fmt.Sprintf("asks %d B of threadgroup memory per group (%s)", tgm, d.TGMParts())
	lower := "lower dynamic_tgm / the tgm: items' bytes or the knobs they read"
	switch {
	case tgm > lim.tgmOptIn && lang == "cuda":
		out = append(out, overLimit{"tgm", fmt.Sprintf(
			"%s; no CUDA GPU gives a block more than %d B (%d KiB), even with the opt-in: %s", what, lim.tgmOptIn, lim.tgmOptIn>>10, lower)})
	case tgm > lim.tgmOptIn:
		out = append(out, overLimit{"tgm", fmt.Sprintf(
			"%s; no Apple GPU gives a threadgroup more than %d B (%d KiB; Metal has no opt-in): %s", what, lim.tgmOptIn, lim.tgmOptIn>>10, lower)})
	case tgm > lim.tgm:
		out = append(out, overLimit{"optin", fmt.Sprintf(
			"%s, over the %d B (%d KiB) a CUDA block gets without opting in: mltop opts in at launch for dynamic shared memory "+
				"(it raises the kernel's max dynamic shared size, up to the GPU's limit: 163 KiB on A100, %d KiB on H100), "+
				"so it runs only on GPUs with that much; static __shared__ arrays cannot pass %d KiB", what, lim.tgm, lim.tgm>>10, lim.tgmOptIn>>10, lim.tgm>>10)})
	}
	return out
}

// lintKnobValues plans, for each knob that lists values, each value with
// the other knobs at their defaults, at each dtype and each dims point
// (dimPoints: the defaults, and the values the dims list), and warns once
// per dispatch and limit about the values that no GPU runs, naming the
// dtypes and dims where only some go over (dynamic_tgm with sizeof(T) or
// a dim). Values the rules refuse, or that do not plan, are left out; so
// is a knob's default where it goes over at the default dims only (the
// default spec's warning says it).
func lintKnobValues(r *Result, lang string, bounds *boundsReader) {
	f := r.Family
	sc := f.Schema()
	points := dimPoints(sc)
	var order []limitKey
	over := map[limitKey][]string{}
	for _, k := range sc.Knobs {
		js := make([]knobJudgement, len(k.Values))
		for i, v := range k.Values {
			js[i] = judgeKnobValue(f, lang, k.Name, v, points, bounds)
		}
		if knobChangesNothing(js) {
			continue
		}
		for i, v := range k.Values {
			j := js[i]
			for _, kk := range j.keys {
				if v == k.Default && overAtDefaultDimsOnly(j.overAt[kk], points[0]) {
					continue
				}
				if over[kk] == nil {
					order = append(order, kk)
				}
				over[kk] = append(over[kk], fmt.Sprintf("%s=%d", k.Name, v)+where(j.overAt[kk], j.runs))
			}
		}
	}
	limit := map[string]string{
		"threads": fmt.Sprintf("more than %d threads per group", limitsOf[lang].threads),
		"tgm":     fmt.Sprintf("more than %d B of threadgroup memory per group", limitsOf[lang].tgmOptIn),
	}
	for _, kk := range order {
		line, col := dispatchPos(f, kk.dispatch)
		if kk.kind == "bounds" {
			lb := bounds.bounds[kk.dispatch]
			r.add(Warning, StepPlan, f.Path(), line, col,
				"dispatch %s: knob values %s (listed in values:) ask more threads per group than its entry %s is compiled for (__launch_bounds__(%s) at %s), which every GPU refuses to launch: drop them from values: or add a rule that refuses them",
				kk.dispatch, strings.Join(over[kk], "; "), lb.sig.Entry, lb.text, lb.where)
			continue
		}
		r.add(Warning, StepPlan, f.Path(), line, col,
			"dispatch %s: knob values %s (listed in values:) ask %s, which no %s runs: drop them from values: or add a rule that refuses them",
			kk.dispatch, strings.Join(over[kk], "; "), limit[kk.kind], gpuKind[lang])
	}
}

// knobChangesNothing says whether every value of a knob (js, one
// judgement per value) goes over the same limits by the same amount
// wherever it runs (`threads: [2048]` whatever WG is): then the knob is
// not what goes over, and the default spec's warning says what does.
func knobChangesNothing(js []knobJudgement) bool {
	if len(js) < 2 {
		return false
	}
	first := js[0].asked
	for _, j := range js {
		if len(j.runs) == 0 || len(j.keys) == 0 || len(j.asked) != len(first) {
			return false
		}
		for _, kk := range j.keys {
			if len(j.overAt[kk]) != len(j.runs) {
				return false
			}
		}
		for kk, at := range j.asked {
			for p, n := range at {
				if m, ok := first[kk][p]; !ok || m != n {
					return false
				}
			}
		}
	}
	return true
}

// limitKey is one limit of one dispatch.
type limitKey struct{ dispatch, kind string }

// place is a dtype and a dims point (dimPoint.String) a spec was planned at.
type place struct{ dt, dims string }

// knobJudgement is how one knob value fares against the GPUs' limits:
// runs are the places where the rules take it and it plans; overAt, for
// each dispatch limit it goes over (keys, in the order met; "optin" left
// out: a matter of which GPU runs it), the places where it does; asked,
// what it asks there (threads, or bytes of threadgroup memory).
type knobJudgement struct {
	runs   []place
	keys   []limitKey
	overAt map[limitKey][]place
	asked  map[limitKey]map[place]int
}

// judgeKnobValue plans knob=v, the other knobs at their defaults, at each
// dtype and dims point.
func judgeKnobValue(f *user.Family, lang, knob string, v int, points []dimPoint, bounds *boundsReader) knobJudgement {
	sc := f.Schema()
	dev := profiler.DeviceInfo{Backend: lang, Name: "mltop check"}
	overAt := map[limitKey][]place{}
	asked := map[limitKey]map[place]int{}
	var runs []place
	var keys []limitKey
	for _, dt := range sc.DTypes {
		for _, pt := range points {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(sc)
			s.Knobs[knob] = v
			for _, dv := range pt {
				s.Dims[dv.name] = dv.value
			}
			if f.Validate(s, dev) != nil {
				continue
			}
			plan, err := f.Plan(s, dev)
			if err != nil {
				continue
			}
			at := place{string(dt), pt.String()}
			runs = append(runs, at)
			for _, d := range plan.Dispatches {
				for _, o := range overLimits(lang, d, bounds) {
					if o.kind == "optin" {
						continue
					}
					kk := limitKey{d.Name, o.kind}
					if overAt[kk] == nil {
						keys = append(keys, kk)
						asked[kk] = map[place]int{}
					}
					overAt[kk] = append(overAt[kk], at)
					asked[kk][at] = d.Threads()
					if o.kind == "tgm" {
						asked[kk][at] = d.TGMBytes()
					}
				}
			}
		}
	}
	return knobJudgement{runs: runs, keys: keys, overAt: overAt, asked: asked}
}

// overAtDefaultDimsOnly: every place in over is at the default dims.
func overAtDefaultDimsOnly(over []place, defaults dimPoint) bool {
	return !slices.ContainsFunc(over, func(p place) bool { return p.dims != defaults.String() })
}

// where says where a knob value goes over a limit, as " at …" after it:
// nothing when it does wherever it runs; its dtypes when the same ones go
// over at every dims point (always so without listed dims); else each
// dims point where it goes over, with the dtypes in brackets where only
// some of those it runs at there do.
func where(over, runs []place) string {
	if len(over) == len(runs) {
		return ""
	}
	var points []string // in the order planned
	ran, wentOver := map[string][]string{}, map[string][]string{}
	for _, p := range runs {
		if ran[p.dims] == nil {
			points = append(points, p.dims)
		}
		ran[p.dims] = append(ran[p.dims], p.dt)
	}
	for _, p := range over {
		wentOver[p.dims] = append(wentOver[p.dims], p.dt)
	}
	if !slices.ContainsFunc(points, func(p string) bool { return !slices.Equal(wentOver[p], wentOver[points[0]]) }) {
		return " at " + strings.Join(wentOver[points[0]], ", ")
	}
	var parts []string
	for _, p := range points {
		switch n := len(wentOver[p]); {
		case n == 0:
		case n == len(ran[p]):
			parts = append(parts, p)
		default:
			parts = append(parts, p+" ("+strings.Join(wentOver[p], ", ")+")")
		}
	}
	if len(parts) > maxPlacesNamed {
		parts = append(parts[:maxPlacesNamed], fmt.Sprintf("and %d more", len(parts)-maxPlacesNamed))
	}
	return " at " + strings.Join(parts, ", ")
}

// maxPlacesNamed is how many dims points a warning names for one value.
const maxPlacesNamed = 6

// dimValue is one dim set to a value.
type dimValue struct {
	name  string
	value int
}

// dimPoint gives the dims that list values one each (the others keep
// their defaults).
type dimPoint []dimValue

// String is "D=128 H=4" ("" without listed dims).
func (p dimPoint) String() string {
	parts := make([]string, len(p))
	for i, dv := range p {
		parts[i] = fmt.Sprintf("%s=%d", dv.name, dv.value)
	}
	return strings.Join(parts, " ")
}

// maxDimPoints bounds the combinations of listed dim values a knob value
// is planned at; past it, each listed value alone (the others at their
// defaults).
const maxDimPoints = 256

// dimPoints are the dims a listed knob value is judged at: the defaults
// first, then each combination of the values the dims list (each value
// alone when there are more than maxDimPoints). Without a dim that lists
// values, the defaults alone.
func dimPoints(sc profiler.Schema) []dimPoint {
	var listed []profiler.Param
	defaults := dimPoint{}
	for _, d := range sc.Dims {
		if len(d.Values) > 0 {
			listed = append(listed, d)
			defaults = append(defaults, dimValue{d.Name, d.Default})
		}
	}
	combos := 1
	for _, d := range listed {
		combos = min(combos*len(d.Values), maxDimPoints+1)
	}
	out := []dimPoint{defaults}
	if combos > maxDimPoints {
		for i, d := range listed {
			for _, v := range d.Values {
				if v != d.Default {
					p := slices.Clone(defaults)
					p[i].value = v
					out = append(out, p)
				}
			}
		}
		return out
	}
	all := []dimPoint{{}}
	for _, d := range listed {
		var next []dimPoint
		for _, p := range all {
			for _, v := range d.Values {
				next = append(next, append(slices.Clone(p), dimValue{d.Name, v}))
			}
		}
		all = next
	}
	for _, p := range all {
		if !slices.Equal(p, defaults) {
			out = append(out, p)
		}
	}
	return out
}

// dispatchPos is where the manifest writes the dispatch of that name.
func dispatchPos(f *user.Family, name string) (line, col int) {
	i := slices.IndexFunc(f.DispatchInfos(), func(d user.DispatchInfo) bool { return d.Name == name })
	if i < 0 {
		return 0, 0
	}
	return f.Pos(fmt.Sprintf("$.dispatches[%d]", i))
}
