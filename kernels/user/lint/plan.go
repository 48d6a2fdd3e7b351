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
// plan is an error; one over a limit a warning (it loads, but no GPU, or
// only some, run it).
func planStep(r *Result) map[string]planned {
	f := r.Family
	out := map[string]planned{}
	for _, lang := range f.Languages() {
		var pl planned
		seen := map[string]bool{}
		warned := map[string]bool{}
		ok := true
		for _, dt := range f.Schema().DTypes {
			s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(f.Schema())
			plan, err := f.Plan(s, profiler.DeviceInfo{Backend: lang, Name: "mltop check"})
			if err != nil {
				r.add(Error, StepPlan, f.Path(), 0, 0, "%s: the default spec does not plan: %v", s, err)
				ok = false
				break
			}
			for _, d := range append(plan.Setup, plan.Dispatches...) {
				if key := d.Program.Entry + "\x00" + d.Program.Code; d.Zero == "" && !seen[key] {
					seen[key] = true
					pl.progs = append(pl.progs, d.Program)
					pl.dts = append(pl.dts, dt)
				}
			}
			if f.Validate(s, profiler.DeviceInfo{Backend: lang, Name: "mltop check"}) != nil {
				continue // the rules refuse it: it never runs, whatever the limits
			}
			for _, d := range plan.Dispatches {
				for _, o := range overLimits(lang, d) {
					if key := d.Name + "\x00" + o.kind; !warned[key] {
						warned[key] = true
						line, col := dispatchPos(f, d.Name)
						r.add(Warning, StepPlan, f.Path(), line, col, "dispatch %s: the default spec (%s) %s", d.Name, s, o.msg)
					}
				}
			}
		}
		if ok {
			out[lang] = pl
			lintKnobValues(r, lang)
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

// overLimits are the limits shared by every GPU of lang that d goes over.
func overLimits(lang string, d profiler.Dispatch) []overLimit {
	lim := limitsOf[lang]
	gpus := gpuKind[lang]
	var out []overLimit
	if n := d.Threads(); n > lim.threads {
		out = append(out, overLimit{"threads", fmt.Sprintf(
			"has %d threads per group (threads %v); no %s runs more than %d: lower the threads expression or the knobs it reads", n, d.Group, gpus, lim.threads)})
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
// the other knobs at their defaults, at each dtype, and warns once per
// dispatch and limit about the values that no GPU runs. A value over a
// limit at some dtypes only (dynamic_tgm with sizeof(T)) names them.
// Values the rules refuse, or that do not plan, are left out.
func lintKnobValues(r *Result, lang string) {
	f := r.Family
	sc := f.Schema()
	dev := profiler.DeviceInfo{Backend: lang, Name: "mltop check"}
	type key struct{ dispatch, kind string }
	var order []key
	over := map[key][]string{}
	for _, k := range sc.Knobs {
		for _, v := range k.Values {
			var runs []profiler.DType // the dtypes at which the rules take v and it plans
			overAt := map[key][]string{}
			var keys []key
			for _, dt := range sc.DTypes {
				s := profiler.Spec{Kernel: f.Name(), DType: dt}.WithDefaults(sc)
				if v == s.Knobs[k.Name] {
					continue
				}
				s.Knobs[k.Name] = v
				if f.Validate(s, dev) != nil {
					continue
				}
				plan, err := f.Plan(s, dev)
				if err != nil {
					continue
				}
				runs = append(runs, dt)
				for _, d := range plan.Dispatches {
					for _, o := range overLimits(lang, d) {
						if o.kind == "optin" {
							continue // a matter of which GPU runs it, as the default spec's warning says
						}
						kk := key{d.Name, o.kind}
						if overAt[kk] == nil {
							keys = append(keys, kk)
						}
						overAt[kk] = append(overAt[kk], string(dt))
					}
				}
			}
			for _, kk := range keys {
				label := fmt.Sprintf("%s=%d", k.Name, v)
				if len(overAt[kk]) < len(runs) {
					label += " at " + strings.Join(overAt[kk], ", ")
				}
				if over[kk] == nil {
					order = append(order, kk)
				}
				over[kk] = append(over[kk], label)
			}
		}
	}
	limit := map[string]string{
		"threads": fmt.Sprintf("more than %d threads per group", limitsOf[lang].threads),
		"tgm":     fmt.Sprintf("more than %d B of threadgroup memory per group", limitsOf[lang].tgmOptIn),
	}
	for _, kk := range order {
		line, col := dispatchPos(f, kk.dispatch)
		r.add(Warning, StepPlan, f.Path(), line, col,
			"dispatch %s: knob values %s (listed in values:) ask %s, which no %s runs: drop them from values: or add a rule that refuses them",
			kk.dispatch, strings.Join(over[kk], "; "), limit[kk.kind], gpuKind[lang])
	}
}

// dispatchPos is where the manifest writes the dispatch of that name.
func dispatchPos(f *user.Family, name string) (line, col int) {
	i := slices.IndexFunc(f.DispatchInfos(), func(d user.DispatchInfo) bool { return d.Name == name })
	if i < 0 {
		return 0, 0
	}
	return f.Pos(fmt.Sprintf("$.dispatches[%d]", i))
}
