package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envName is a whole MLTOP_ variable name (not a prefix such as "MLTOP_TUNE_").
var envName = regexp.MustCompile(`^MLTOP_[A-Z0-9_]*[A-Z0-9]$`)

// notEnvironment are MLTOP_ names in the code that no one reads from the
// environment.
var notEnvironment = map[string]string{
	"MLTOP_NO_NUMPY": "a marker the Python reference driver prints when NumPy is missing",
}

// stringConst is the value of a string literal, or of a + of string
// literals (a constant built in pieces); ok is false for anything else.
func stringConst(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return stringConst(e.X)
	case *ast.BinaryExpr:
		x, okx := stringConst(e.X)
		y, oky := stringConst(e.Y)
		return x + y, okx && oky && e.Op == token.ADD
	}
	return "", false
}

// envNamesIn are the MLTOP_ names a Go source names as a string: its
// string literals, and its constants whose value is built of literals.
// Comments do not count.
func envNamesIn(src string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var names []string
	add := func(s string) {
		if envName.MatchString(s) && !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if s, ok := stringConst(n); ok {
				add(s)
			}
		case *ast.ValueSpec:
			for _, v := range n.Values {
				if s, ok := stringConst(v); ok {
					add(s)
				}
			}
		}
		return true
	})
	return names, nil
}

// codeEnvNames are the MLTOP_ names of the repository's non-test Go files,
// each with the first file that names it.
func codeEnvNames(t *testing.T) map[string]string {
	t.Helper()
	names := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := envNamesIn(string(src))
		if err != nil {
			return err
		}
		for _, n := range found {
			if _, ok := names[n]; !ok {
				names[n] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// envTableNames are the variables of the first column of the table under
// "## Environment".
func envTableNames(doc string) []string {
	var names []string
	for _, row := range strings.Split(tableRows(section(doc, "## Environment")), "\n") {
		cells := strings.Split(row, "|")
		if len(cells) > 2 {
			if name := strings.Trim(strings.TrimSpace(cells[1]), "`"); envName.MatchString(name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// envTableProblems: a variable the code reads with no row, a row for a
// variable the code does not read, and a row given twice.
func envTableProblems(code map[string]string, doc string) []string {
	var bad []string
	rows := envTableNames(doc)
	for name, path := range code {
		if _, skip := notEnvironment[name]; !skip && !slices.Contains(rows, name) {
			bad = append(bad, name+" ("+path+") has no row in docs/commands.md's Environment table")
		}
	}
	for i, name := range rows {
		if _, ok := code[name]; !ok {
			bad = append(bad, "the Environment table has "+name+", which no non-test Go file reads")
		} else if slices.Contains(rows[:i], name) {
			bad = append(bad, "the Environment table has "+name+" twice")
		}
	}
	slices.Sort(bad)
	return bad
}

// TestDocsEnvironmentTable: docs/commands.md's Environment table has a row
// for every MLTOP_ variable the code reads, and only those.
func TestDocsEnvironmentTable(t *testing.T) {
	code := codeEnvNames(t)
	if len(code) < 15 {
		t.Fatalf("found only %d MLTOP_ names in the code: is the scan broken? %v", len(code), code)
	}
	for name := range notEnvironment {
		if _, ok := code[name]; !ok {
			t.Errorf("notEnvironment lists %s, which no Go file names any more: drop it", name)
		}
	}
	for _, bad := range envTableProblems(code, docFiles(t)["docs/commands.md"]) {
		t.Error(bad)
	}
}

// The scan finds literals and constants built of literals, not comments or
// prefixes; the table check catches a missing, a stale and a doubled row.
func TestDocsEnvironmentCheckCatches(t *testing.T) {
	src := `package x
// MLTOP_IN_COMMENT is not read
const TimerEnv = "MLTOP_TIMER"
const split = "MLTOP_" + "SPLIT"
const prefix = "MLTOP_TUNE_"
func f() string { return os.Getenv("MLTOP_INLINE") + "MLTOP_" + name }
`
	got, err := envNamesIn(src)
	slices.Sort(got)
	if want := []string{"MLTOP_INLINE", "MLTOP_SPLIT", "MLTOP_TIMER"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("envNamesIn = %q, %v; want %q", got, err, want)
	}
	code := map[string]string{"MLTOP_A": "a.go", "MLTOP_B": "b.go"}
	table := "## Environment\n\n| variable | default | what it does |\n| --- | --- | --- |\n"
	for _, c := range []struct {
		rows string
		want int
	}{
		{"| `MLTOP_A` | unset | a |\n| `MLTOP_B` | `1` | b |\n", 0},
		{"| `MLTOP_A` | unset | a |\n", 1},
		{"| `MLTOP_A` | unset | a |\n| `MLTOP_B` | `1` | b |\n| `MLTOP_GONE` | none | c |\n", 1},
		{"| `MLTOP_A` | unset | a |\n| `MLTOP_B` | `1` | b |\n| `MLTOP_A` | unset | a |\n", 1},
		{"", 2},
	} {
		if got := envTableProblems(code, "# Commands\n\n"+table+c.rows+"\n## Next\n"); len(got) != c.want {
			t.Errorf("rows %q: %q, want %d problems", c.rows, got, c.want)
		}
	}
	if got := envTableProblems(code, "# Commands\n\n## Next\n"+table[len("## Environment\n"):]+"| `MLTOP_A` | | |\n| `MLTOP_B` | | |\n"); len(got) != 2 {
		t.Errorf("a table under another heading should not count: %q", got)
	}
}

// envRowsOutside are the table rows, outside docs/commands.md, whose first
// cell is an MLTOP_ variable: a second table of variables, which drifts
// from the one in commands.md.
func envRowsOutside(docs map[string]string) []string {
	var bad []string
	for path, doc := range docs {
		if path == "docs/commands.md" {
			continue
		}
		for _, row := range strings.Split(tableRows(doc), "\n") {
			cells := strings.Split(row, "|")
			if len(cells) > 2 && envName.MatchString(strings.Trim(strings.TrimSpace(cells[1]), "`")) {
				bad = append(bad, path+": "+row)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestDocsOneEnvironmentTable: the variables are described in one table,
// docs/commands.md's; other pages link to it.
func TestDocsOneEnvironmentTable(t *testing.T) {
	for _, row := range envRowsOutside(docFiles(t)) {
		t.Errorf("%s\nmove the row into docs/commands.md's Environment table and link to it (commands.md#environment)", row)
	}
	if got := envRowsOutside(map[string]string{
		"docs/cuda.md":     "| variable | effect |\n| --- | --- |\n| `MLTOP_NVRTC` | the library |\n| `CUDA_HOME` | the toolkit |\n",
		"docs/commands.md": "| `MLTOP_NVRTC` | none | the library |\n",
	}); len(got) != 1 {
		t.Errorf("envRowsOutside found %q, want the one MLTOP_NVRTC row of docs/cuda.md", got)
	}
}
