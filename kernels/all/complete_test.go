package all_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/kit"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/shaders"
)

// tree is what the completeness check looks at; the test of the check
// itself swaps pieces out for broken variants.
type tree struct {
	kernelsDir string // the folder holding kernels/<family>/
	shaderDirs []string
	source     func(name, ext string) bool
	cpuKernel  func(name string) bool
	configs    string // all shipped configs, concatenated
	families   string // docs/families.md
	tolerances string // docs/tolerances.md
}

func realTree(t *testing.T) tree {
	t.Helper()
	var cfg strings.Builder
	files, _ := filepath.Glob("../../configs/*.yaml")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Write(b)
	}
	families, err := os.ReadFile("../../docs/families.md")
	if err != nil {
		t.Fatal(err)
	}
	tolerances, err := os.ReadFile("../../docs/tolerances.md")
	if err != nil {
		t.Fatal(err)
	}
	return tree{
		kernelsDir: "..",
		shaderDirs: shaders.Dirs(),
		source:     func(name, ext string) bool { _, err := shaders.Path(name, ext); return err == nil },
		cpuKernel:  func(name string) bool { _, ok := host.Lookup(name); return ok },
		configs:    cfg.String(),
		families:   string(families),
		tolerances: string(tolerances),
	}
}

// incomplete lists what family f lacks: a folder under kernels/ and under
// shaders/, examples, a float64 reference that checks something, a CPU
// implementation, a CUDA and a Metal source of each program its examples
// plan (or a stated reason), a row in a shipped config, a row in the
// families table in docs/families.md, a row in the table of docs/tolerances.md.
func incomplete(f profiler.Family, tr tree) []string {
	var miss []string
	name := f.Name()
	if st, err := os.Stat(filepath.Join(tr.kernelsDir, name)); err != nil || !st.IsDir() {
		miss = append(miss, "folder kernels/"+name)
	}
	hasShaderDir := false
	for _, d := range tr.shaderDirs {
		hasShaderDir = hasShaderDir || d == name
	}
	if !hasShaderDir {
		miss = append(miss, "folder shaders/"+name)
	}
	var specs []profiler.Spec
	if ex, ok := f.(kit.Exampler); ok {
		specs = ex.Examples()
	}
	if len(specs) == 0 {
		miss = append(miss, "Examples (kit.Exampler)")
	}
	seen := map[string]bool{}
	refChecked := false
	for _, s := range specs {
		_, full, err := profiler.Resolve(s, kittest.CPU)
		if err != nil {
			miss = append(miss, fmt.Sprintf("a valid example (%v)", err))
			continue
		}
		p, err := f.Plan(full, kittest.CPU)
		if err != nil {
			miss = append(miss, fmt.Sprintf("a plan of its example (%v)", err))
			continue
		}
		if !refChecked {
			in := profiler.Inputs{}
			for _, b := range p.Buffers {
				if b.Role == profiler.In {
					in[b.Name] = profiler.Fill(b, 1)
				}
			}
			ref, err := f.Reference(full, in, 64, 1)
			if err != nil || ref == nil || len(ref.Checks) == 0 || len(ref.Checks[0].Want) == 0 {
				miss = append(miss, fmt.Sprintf("a float64 reference that checks values (%v)", err))
			}
			refChecked = true
		}
		for _, d := range append(append([]profiler.Dispatch(nil), p.Setup...), p.Dispatches...) {
			src := d.Program.Source
			if d.Zero != "" || seen[src] {
				continue
			}
			seen[src] = true
			if !tr.cpuKernel(src) {
				miss = append(miss, "CPU kernel "+src)
			}
			for backend, ext := range map[string]string{"cuda": ".cu", "metal": ".metal"} {
				if tr.source(src, ext) {
					continue
				}
				if ns, ok := f.(kit.NoSourcer); ok && ns.NoSource(backend) != "" {
					continue
				}
				miss = append(miss, "shaders/"+name+"/"+src+ext)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^\s*-?\s*kernel:\s*` + regexp.QuoteMeta(name) + `\s*$`).MatchString(tr.configs) {
		miss = append(miss, "a sweep in configs/*.yaml")
	}
	if !strings.Contains(tr.families, "\n| `"+name+"` |") {
		miss = append(miss, "a row in docs/families.md's table")
	}
	if !hasToleranceRow(tr.tolerances, name) {
		miss = append(miss, "a row in docs/tolerances.md's table")
	}
	return miss
}

// hasToleranceRow: a row of the per-family table in docs/tolerances.md
// names the family in its first cell ("attn_bwd, attn_bwd_atomic, …" names
// three).
func hasToleranceRow(doc, name string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(l, "| "), " |")
		for _, n := range strings.Split(first, ",") {
			if strings.TrimSpace(n) == name {
				return true
			}
		}
	}
	return false
}

// TestEveryFamilyIsComplete walks the registry.
func TestEveryFamilyIsComplete(t *testing.T) {
	tr := realTree(t)
	for _, f := range profiler.Families(false) {
		if miss := incomplete(f, tr); len(miss) > 0 {
			t.Errorf("family %s lacks: %s", f.Name(), strings.Join(miss, "; "))
		}
	}
}

// TestCompletenessCatchesBrokenFamilies holds the check to broken variants
// of a real family's tree, so that it cannot pass by checking nothing.
func TestCompletenessCatchesBrokenFamilies(t *testing.T) {
	f, err := profiler.Lookup("softmax_bwd")
	if err != nil {
		t.Fatal(err)
	}
	base := realTree(t)
	cases := []struct {
		name   string
		break_ func(*tree)
		f      profiler.Family
		want   string
	}{
		{"no .metal", func(tr *tree) {
			real := tr.source
			tr.source = func(n, ext string) bool { return ext != ".metal" && real(n, ext) }
		}, f, "shaders/softmax_bwd/softmax_bwd.metal"},
		{"no .cu", func(tr *tree) {
			real := tr.source
			tr.source = func(n, ext string) bool { return ext != ".cu" && real(n, ext) }
		}, f, "shaders/softmax_bwd/softmax_bwd.cu"},
		{"no CPU kernel", func(tr *tree) { tr.cpuKernel = func(string) bool { return false } }, f, "CPU kernel softmax_bwd"},
		{"no config", func(tr *tree) { tr.configs = strings.ReplaceAll(tr.configs, "softmax_bwd", "other") }, f, "a sweep in configs"},
		{"no families row", func(tr *tree) { tr.families = strings.ReplaceAll(tr.families, "`softmax_bwd`", "x") }, f, "docs/families.md"},
		{"no tolerances row", func(tr *tree) { tr.tolerances = strings.ReplaceAll(tr.tolerances, "| softmax_bwd |", "| x |") }, f, "docs/tolerances.md"},
		{"no shader folder", func(tr *tree) { tr.shaderDirs = nil }, f, "folder shaders/softmax_bwd"},
		{"no kernels folder", func(tr *tree) { tr.kernelsDir = t.TempDir() }, f, "folder kernels/softmax_bwd"},
		{"no examples", func(*tree) {}, noExamples{f}, "Examples"},
		{"reference checks nothing", func(*tree) {}, emptyRef{f}, "float64 reference"},
		{"stated reason excuses the .metal", func(tr *tree) {
			real := tr.source
			tr.source = func(n, ext string) bool { return ext != ".metal" && real(n, ext) }
		}, noMetal{f}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := base
			c.break_(&tr)
			miss := strings.Join(incomplete(c.f, tr), "; ")
			if c.want == "" {
				if miss != "" {
					t.Errorf("reported %q, want nothing", miss)
				}
				return
			}
			if !strings.Contains(miss, c.want) {
				t.Errorf("reported %q, want it to name %q", miss, c.want)
			}
		})
	}
}

// Broken variants of a real family.
type (
	noExamples struct{ profiler.Family }
	emptyRef   struct {
		profiler.Family
	}
	noMetal struct{ profiler.Family }
)

func (e emptyRef) Examples() []profiler.Spec { return e.Family.(kit.Exampler).Examples() }
func (emptyRef) Reference(profiler.Spec, profiler.Inputs, int, uint64) (*profiler.Reference, error) {
	return &profiler.Reference{}, nil
}
func (n noMetal) Examples() []profiler.Spec { return n.Family.(kit.Exampler).Examples() }
func (noMetal) NoSource(backend string) string {
	if backend == "metal" {
		return "test: pretends to have no Metal kernel yet"
	}
	return ""
}
