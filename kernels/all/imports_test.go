package all_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mltop/mltop/"

// kernelImportRule says whether a file under kernels/ may import path
// (module-relative): families sit below the sinks, the TUI and the CLI,
// and from internal/ use only the neutral libraries (YAML messages, plan
// checks, engine test helpers), never the CLI.
func kernelImportRule(path string, test bool) (ok bool, why string) {
	switch {
	case path == "profiler/sink" || strings.HasPrefix(path, "profiler/sink/"):
		return false, "a family reports through profiler.Report; the CLI reads and prints it through the sink"
	case path == "ui" || strings.HasPrefix(path, "ui/"):
		return false, "the UI imports the engine, never the reverse"
	case strings.HasPrefix(path, "internal/"):
		allowed := []string{"internal/yamlmsg", "internal/plancheck"}
		if test {
			allowed = append(allowed, "internal/enginetest")
		}
		if slices.Contains(allowed, path) {
			return true, ""
		}
		return false, "internal/ holds the CLI; only " + strings.Join(allowed, ", ") + " are neutral libraries"
	}
	return true, ""
}

// TestKernelsImportNoSinkUIOrCLI walks every Go file under kernels/ and
// fails on an import of profiler/sink, ui or the CLI's internal packages.
func TestKernelsImportNoSinkUIOrCLI(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ours := strings.CutPrefix(path, module)
			if !ours {
				continue
			}
			if ok, why := kernelImportRule(rel, strings.HasSuffix(p, "_test.go")); !ok {
				t.Errorf("%s imports %s: %s", p, path, why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked %d Go files under kernels/: the walk is not finding the families", files)
	}
}

// TestKernelImportRule: the rule catches each layer a family must not
// reach and lets the engine through.
func TestKernelImportRule(t *testing.T) {
	for _, c := range []struct {
		path string
		test bool
		ok   bool
	}{
		{"profiler", false, true},
		{"profiler/units", false, true},
		{"kernels/kit", false, true},
		{"internal/yamlmsg", false, true},
		{"internal/enginetest", true, true},
		{"profiler/sink", false, false},
		{"profiler/sink", true, false},
		{"ui", false, false},
		{"internal/cli", false, false},
		{"internal/cli", true, false},
		{"internal/enginetest", false, false},
	} {
		if ok, _ := kernelImportRule(c.path, c.test); ok != c.ok {
			t.Errorf("import %s (test %v): allowed %v, want %v", c.path, c.test, ok, c.ok)
		}
	}
}
