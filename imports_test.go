package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// importClass orders import groups: the standard library, then other
// modules, then mltop's own packages (goimports -local github.com/mltop/mltop).
func importClass(path string) int {
	switch {
	case strings.HasPrefix(path, "github.com/mltop/mltop"):
		return 2
	case !strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 0
	}
	return 1
}

// importGroupsOK says whether a file's imports come in groups separated by
// blank lines, each of one class, in class order.
func importGroupsOK(fs *token.FileSet, src []byte) (bool, string) {
	f, err := parser.ParseFile(fs, "", src, parser.ImportsOnly)
	if err != nil {
		return true, "" // gofmt and vet report syntax errors
	}
	lastLine, lastClass := 0, -1
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		c, line := importClass(path), fs.Position(im.Pos()).Line
		newGroup := lastLine != 0 && line > lastLine+1
		if lastClass >= 0 && (!newGroup && c != lastClass || newGroup && c <= lastClass) {
			return false, path
		}
		lastLine, lastClass = line, c
	}
	return true, ""
}

// TestImportGroups: every Go file groups its imports the goimports way,
// standard library / other modules / mltop, so a file's dependencies read
// at a glance (fix with goimports -local github.com/mltop/mltop -w FILE).
func TestImportGroups(t *testing.T) {
	fs := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if ok, at := importGroupsOK(fs, src); !ok {
			t.Errorf("%s: import %q is not in its group (standard library, other modules, mltop — goimports -local github.com/mltop/mltop)", p, at)
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("walked %d Go files: %v", n, err)
	}
}

func TestImportGroupsCatchesMixing(t *testing.T) {
	for src, want := range map[string]bool{
		"package x\nimport (\n\t\"fmt\"\n\n\t\"github.com/x/y\"\n\n\t\"github.com/mltop/mltop/profiler\"\n)\n": true,
		"package x\nimport (\n\t\"fmt\"\n\t\"github.com/mltop/mltop/profiler\"\n)\n":                           false,
		"package x\nimport (\n\t\"github.com/mltop/mltop/profiler\"\n\n\t\"fmt\"\n)\n":                         false,
		"package x\nimport (\n\t\"github.com/x/y\"\n\t\"github.com/mltop/mltop/profiler\"\n)\n":                false,
	} {
		if ok, _ := importGroupsOK(token.NewFileSet(), []byte(src)); ok != want {
			t.Errorf("%q: ok %v, want %v", src, ok, want)
		}
	}
}
