package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGoModMarksDirectDependencies: a module this repository imports must
// not be marked `// indirect` in go.mod (`go mod tidy` fixes it).
func TestGoModMarksDirectDependencies(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var indirect []string
	for line := range strings.SplitSeq(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.Contains(line, "// indirect") {
			if f[0] == "require" {
				f = f[1:]
			}
			indirect = append(indirect, f[0])
		}
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, m := range indirect {
				if p == m || strings.HasPrefix(p, m+"/") {
					t.Errorf("%s imports %s, but go.mod marks %s // indirect: run go mod tidy", path, p, m)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
