package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// The plan step plans the default spec without a device and holds it (and
// each value a knob lists) against the limits every GPU of the language
// shares: a spec that does not plan is a [plan] error, not a compile one;
// a default spec over the threads every GPU allows a [plan] error, one
// over another limit (or a listed knob value over any) a [plan] warning
// naming the limit; a manifest within them gets no [plan] finding at all.
func TestPlanStep(t *testing.T) {
	const dispatch = "{entry: k, grid: [rows], threads: [WG], args: [X, Y, rows, cols]}"
	metalSrc := "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const T* X [[buffer(0)]], device T* Y [[buffer(1)]], constant int& rows [[buffer(2)]], constant int& cols [[buffer(3)]], uint i [[thread_position_in_grid]]) {}\n"
	for _, c := range []struct {
		name    string
		edit    func(string) string
		metal   bool
		level   Level // of the [plan] findings; -1: none
		want    []string
		exclude string
	}{
		{"within the limits", func(m string) string { return m }, false, -1, nil, ""},
		{"dynamic within 48 KiB", dyn(`"WG * 4"`), false, -1, nil, ""},
		{"threads over 1024", func(m string) string {
			return strings.Replace(m, "threads: [WG]", `threads: ["WG * 32"]`, 1)
		}, false, Error, []string{"error   [plan] ", "dispatch k: the default spec (", "WG=64", "has 2048 threads per group (threads [2048 1 1]); no CUDA GPU runs more than 1024: lower the threads expression", "warning [plan] ", "knob values WG=128 (listed in values:)"}, ""},
		// threads do not read WG: every WG value goes over by the same
		// amount, so the knob is not blamed (only the default spec's warning)
		{"threads over 1024 whatever the knob", func(m string) string {
			return strings.Replace(m, "threads: [WG]", `threads: [2048]`, 1)
		}, false, Error, []string{"error   [plan] ", "dispatch k: the default spec (", "has 2048 threads per group (threads [2048 1 1]); no CUDA GPU runs more than 1024"}, "knob values"},
		{"metal threads over 1024", func(m string) string {
			return strings.Replace(m, "threads: [WG]", `threads: [2048]`, 1)
		}, true, Error, []string{"error   [plan] ", "has 2048 threads per group (threads [2048 1 1]); no Apple GPU runs more than 1024"}, "knob values"},
		{"a listed knob value over 1024 threads", func(m string) string {
			return strings.Replace(m, "threads: [WG]", `threads: ["WG * 16"]`, 1)
		}, false, Warning, []string{"dispatch k: knob values WG=128 (listed in values:) ask more than 1024 threads per group, which no CUDA GPU runs"}, "the default spec"},
		{"dynamic over every GPU", dyn(`"WG * 4000"`), false, Warning, []string{"asks 256000 B of threadgroup memory per group (dynamic 256000 B); no CUDA GPU gives a block more than 232448 B (227 KiB), even with the opt-in: lower dynamic_tgm"}, ""},
		{"items and dynamic over 48 KiB", func(m string) string {
			return dyn(`"WG * 500", tgm: [{name: part, bytes: "20000"}]`)(m)
		}, false, Warning, []string{"asks 52000 B of threadgroup memory per group (part 20000 B + dynamic 32000 B), over the 49152 B (48 KiB) a CUDA block gets without opting in: mltop opts in at launch"}, "knob values"},
		{"metal over 32 KiB", dyn(`"WG * 600"`), true, Warning, []string{"knob values WG=128 (listed in values:) ask more than 32768 B of threadgroup memory per group, which no Apple GPU runs", "asks 38400 B of threadgroup memory per group (dynamic 38400 B); no Apple GPU gives a threadgroup more than 32768 B (32 KiB; Metal has no opt-in)"}, ""},
		{"metal within 32 KiB", dyn(`"WG * 200"`), true, -1, nil, ""},
		// sizeof(T): WG=128 goes over at f32 only, whichever dtype comes first
		{"a listed knob value over at one dtype", func(m string) string {
			return dyn(`"WG * 80 * sizeof(T)"`)(strings.Replace(m, "dtypes: [f32]", "dtypes: [f16, f32]", 1))
		}, true, Warning, []string{"knob values WG=128 at f32 (listed in values:) ask more than 32768 B"}, "the default spec"},
		// the rules refuse the f32 default spec and WG=128 at f16: nothing runs over the limit
		{"over the limit only where a rule refuses", func(m string) string {
			m = strings.Replace(m, "dtypes: [f32]", "dtypes: [f32, f16]", 1)
			m = strings.Replace(m, `rules: ["cols % 4 == 0"]`, `rules: ["cols % 4 == 0", "WG * 200 * sizeof(T) <= 32768"]`, 1)
			return dyn(`"WG * 200 * sizeof(T)"`)(m)
		}, true, -1, nil, ""},
		// a dim that lists values: each knob value is judged at them too,
		// and the warning names the dims where it goes over
		{"a listed knob value over at listed dims", func(m string) string {
			return dyn(`"WG * cols * 8"`)(listCols(m))
		}, true, Warning, []string{"knob values WG=64 at cols=256; WG=128 at cols=64, cols=256 (listed in values:) ask more than 32768 B"}, "the default spec"},
		{"over at every listed dim", func(m string) string {
			return dyn(`"WG * 300"`)(listCols(m))
		}, true, Warning, []string{"knob values WG=128 (listed in values:) ask more than 32768 B"}, " at cols"},
		{"over at listed dims and one dtype", func(m string) string {
			return dyn(`"WG * cols * 2 * sizeof(T)"`)(listCols(strings.Replace(m, "dtypes: [f32]", "dtypes: [f16, f32]", 1)))
		}, true, Warning, []string{"knob values WG=64 at cols=256; WG=128 at cols=64 (f32), cols=256 (listed in values:)"}, "the default spec"},
		// the default knob value over at the default dims alone: the default spec's warning only
		{"the default value over at the default dims only", func(m string) string {
			return dyn(`"WG * 32768 / cols"`)(listCols(m))
		}, true, Warning, []string{"dispatch k: the default spec (", "asks 131072", "knob values WG=128 at cols=16, cols=64 (listed in values:)"}, "WG=64 at"},
		{"division by zero", func(m string) string {
			return strings.Replace(m, "grid: [rows]", "grid: [rows / 0]", 1)
		}, false, Error, []string{"error   [plan] ", "the default spec does not plan: ", "integer division by zero in grid[0] 'rows / 0'"}, "[compile]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := c.edit(usertest.Manifest("plan_k"))
			files := map[string]string{"k.cu": usertest.Source}
			if c.metal {
				m = strings.Replace(m, "sources: {cuda: k.cu}", "sources: {metal: k.metal}", 1)
				files = map[string]string{"k.metal": metalSrc}
			}
			files["kernel.yaml"] = m
			if !strings.Contains(m, dispatch[:20]) {
				t.Fatalf("the edit lost the dispatch:\n%s", m)
			}
			rep := Check(usertest.Write(t, files), noTools(t))
			r := rep.Manifests[0]
			text := findingsOf(r)
			if r.Broken() {
				t.Fatalf("broken:\n%s", text)
			}
			var plan []Finding
			for _, f := range r.Findings {
				if f.Step == StepPlan {
					plan = append(plan, f)
				}
			}
			if c.level < 0 {
				if len(plan) > 0 {
					t.Errorf("[plan] findings on a spec within the limits:\n%s", text)
				}
				return
			}
			if len(plan) == 0 {
				t.Fatalf("no [plan] finding:\n%s", text)
			}
			// the default spec's finding is at c.level; those of listed knob values are warnings
			for _, f := range plan {
				if f.Level != c.level && (f.Level != Warning || !strings.Contains(f.Msg, "knob values")) {
					t.Errorf("[plan] finding at %s, want %s: %s", f.Level, c.level, f)
				}
			}
			mustContain(t, c.name, text, c.want...)
			if c.exclude != "" && strings.Contains(text, c.exclude) {
				t.Errorf("%s: %q in\n%s", c.name, c.exclude, text)
			}
			wantCode := map[Level]int{Warning: 0, Error: 1}[c.level]
			if r.Unrunnable { // TestThreadsOverTheHardLimit says when
				wantCode = 2
			}
			if rep.ExitCode() != wantCode {
				t.Errorf("exit %d, want %d", rep.ExitCode(), wantCode)
			}
		})
	}
}

// dyn gives the test manifest's dispatch dynamic_tgm: v (and whatever
// follows it in v).
func dyn(v string) func(string) string {
	return func(m string) string {
		return strings.Replace(m, "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols], dynamic_tgm: "+v+"}", 1)
	}
}

// listCols makes the test manifest's cols dim list values: 16 (its
// default), 64 and 256.
func listCols(m string) string {
	return strings.Replace(m, "cols: {default: 16}", "cols: {values: [16, 64, 256], default: 16}", 1)
}

// Threads per group over the hard limit (1024 on every CUDA and Apple GPU)
// in a default spec make the manifest unrunnable: an error, exit 2, the
// verdict says so. Only listed knob values over it, or the default spec
// over a limit that depends on the GPU (shared memory), stay warnings
// with exit 0.
func TestThreadsOverTheHardLimit(t *testing.T) {
	for _, c := range []struct {
		name, threads, dynamic string
		unrunnable             bool
		verdict                string
	}{
		{"the default spec over 1024", "[2048]", "", true, "unrunnable: its default spec runs on no GPU (1 error"},
		{"the default spec over 1024 through the knob", `["WG * 32"]`, "", true, "unrunnable: its default spec runs on no GPU (1 error, 1 warning"},
		{"a listed knob value over 1024", `["WG * 16"]`, "", false, "ok, but"},
		{"at 1024 exactly", `["WG * 8"]`, "", false, "ok, but"},
		{"the default spec over 48 KiB of shared memory", "[WG]", `, dynamic_tgm: "WG * 1000"`, false, "ok, but"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := strings.Replace(usertest.Manifest("hard_k"), "threads: [WG]", "threads: "+c.threads, 1)
			m = strings.Replace(m, "args: [X, Y, rows, cols]}", "args: [X, Y, rows, cols]"+c.dynamic+"}", 1)
			rep := Check(usertest.Write(t, map[string]string{"k.cu": usertest.Source, "kernel.yaml": m}), noTools(t))
			r := rep.Manifests[0]
			text := findingsOf(r) + "\n" + r.Verdict()
			wantCode := map[bool]int{true: 2, false: 0}[c.unrunnable]
			if r.Unrunnable != c.unrunnable || rep.ExitCode() != wantCode || !strings.Contains(r.Verdict(), c.verdict) {
				t.Errorf("Unrunnable %v, exit %d; want %v, %d, verdict %q:\n%s", r.Unrunnable, rep.ExitCode(), c.unrunnable, wantCode, c.verdict, text)
			}
			if c.unrunnable {
				mustContain(t, c.name, text, "error   [plan] ", "threads per group", "no CUDA GPU runs more than 1024: lower the threads expression")
				// a sweep on a GPU refuses the spec (an invalid row) in the same terms
				s := profiler.Spec{Kernel: r.Family.Name(), DType: profiler.F32}.WithDefaults(r.Family.Schema())
				_, err := r.Family.Plan(s, profiler.DeviceInfo{Backend: "cuda", Name: "H100", MaxThreadsPerGroup: 1024})
				if err == nil || !strings.Contains(err.Error(), "2048 threads per group (threads [2048 1 1]) but H100 allows 1024: lower the threads expression") {
					t.Errorf("planned on a GPU: %v", err)
				}
			} else if strings.Contains(text, "error ") {
				t.Errorf("an error:\n%s", text)
			}
		})
	}
}
