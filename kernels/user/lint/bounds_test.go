package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// A CUDA entry's __launch_bounds__(N) is the most threads a GPU launches
// it with: the default spec over it is a [plan] error (exit 1, as for
// errors), a listed knob value over it a warning naming the values. N is
// read as a literal, through the source's macros and constants, through
// the names mltop injects (knobs), and from the entry's template
// arguments; a bound mltop cannot evaluate is not compared.
func TestLaunchBoundsAgainstThreads(t *testing.T) {
	const params = "(const T* X, T* Y, int rows, int cols) {}\n"
	const defaultOver = "dispatch k: the default spec ("
	for _, c := range []struct {
		name, src, entry, threads string
		level                     Level // of the [plan] findings; -1: none
		want                      []string
	}{
		{"a literal under the default", "__global__ void __launch_bounds__(32) k" + params, "k", "[WG]", Error,
			[]string{defaultOver, "has 64 threads per group (threads [64 1 1]), over the 32 its entry k is compiled for by __launch_bounds__(32) at k.cu:1: every GPU refuses the launch",
				"knob values WG=128 (listed in values:) ask more threads per group than its entry k is compiled for (__launch_bounds__(32) at k.cu:1)"}},
		{"a literal under a listed value", "__global__ void __launch_bounds__(64) k" + params, "k", "[WG]", Warning,
			[]string{"dispatch k: knob values WG=128 (listed in values:) ask more threads per group than its entry k is compiled for (__launch_bounds__(64) at k.cu:1), which every GPU refuses to launch"}},
		{"a literal over every value", "__global__ void __launch_bounds__(128, 4) k" + params, "k", "[WG]", -1, nil},
		{"a macro", "#define BLOCK 64\n\n__global__ void\n__launch_bounds__(BLOCK)\nk" + params, "k", "[WG]", Warning,
			[]string{"knob values WG=128 (listed in values:) ask more threads per group than its entry k is compiled for (__launch_bounds__(BLOCK) at k.cu:4)"}},
		{"a macro expression and a second argument", "#define BLOCK 64\n__global__ void __launch_bounds__(BLOCK / 2, 4) k" + params, "k", "[WG]", Error,
			[]string{"over the 32 its entry k is compiled for by __launch_bounds__(BLOCK / 2) (= 32) at k.cu:2"}},
		{"a source constant", "constexpr int BLOCK = 32;\n__global__ void __launch_bounds__(BLOCK) k" + params, "k", "[WG]", Error,
			[]string{"by __launch_bounds__(BLOCK) (= 32) at k.cu:2"}},
		{"the knob it is launched with", "__global__ void __launch_bounds__(WG) k" + params, "k", "[WG]", -1, nil},
		{"the knob, twice the threads", "__global__ void __launch_bounds__(WG) k" + params, "k", `["WG * 2"]`, Error,
			[]string{"has 128 threads per group (threads [128 1 1]), over the 64 its entry k is compiled for by __launch_bounds__(WG) (= 64)", "knob values WG=128 (listed in values:)"}},
		{"a template parameter the entry sets", "template <int BS>\n__global__ void __launch_bounds__(BS) k" + params, "k<32>", "[WG]", Error,
			[]string{"over the 32 its entry k is compiled for by __launch_bounds__(BS) (= 32) at k.cu:2"}},
		{"a template parameter from the knob", "template <int BS>\n__global__ void __launch_bounds__(BS) k" + params, "k<WG>", "[WG]", -1, nil},
		{"a bound mltop cannot evaluate", "__device__ constexpr int pick(int x) { return x; }\n__global__ void __launch_bounds__(pick(8)) k" + params, "k", "[WG]", -1, nil},
		{"another kernel's bound", "__global__ void __launch_bounds__(32) other(int* p) {}\n__global__ void k" + params, "k", "[WG]", -1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := usertest.Manifest("bounds_k")
			m = strings.Replace(m, "{entry: k, grid: [rows], threads: [WG]", "{entry: \""+c.entry+"\", grid: [rows], threads: "+c.threads, 1)
			rep := Check(usertest.Write(t, map[string]string{"k.cu": c.src, "kernel.yaml": m}), noTools(t))
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
				if len(plan) > 0 || rep.ExitCode() != 0 {
					t.Errorf("exit %d, [plan] findings within the bound:\n%s", rep.ExitCode(), text)
				}
				return
			}
			if len(plan) == 0 {
				t.Fatalf("no [plan] finding:\n%s", text)
			}
			for _, f := range plan {
				if f.Level != c.level && (f.Level != Warning || !strings.Contains(f.Msg, "knob values")) {
					t.Errorf("[plan] finding at %s, want %s: %s", f.Level, c.level, f)
				}
			}
			mustContain(t, c.name, text, c.want...)
			if want := map[Level]int{Warning: 0, Error: 1}[c.level]; rep.ExitCode() != want || r.Unrunnable {
				t.Errorf("exit %d (unrunnable %v), want %d", rep.ExitCode(), r.Unrunnable, want)
			}
		})
	}
}

func TestTemplateArgs(t *testing.T) {
	for entry, want := range map[string]string{
		"k":                  "",
		"k<256>":             "256",
		"ns::k<float, 4>":    "float|4",
		"k<pair<int, 2>, 8>": "pair<int, 2>|8",
	} {
		if got := strings.Join(templateArgs(entry), "|"); got != want {
			t.Errorf("templateArgs(%q) = %q, want %q", entry, got, want)
		}
	}
}
