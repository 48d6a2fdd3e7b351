package lint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Every tgm: suggestion a lint test produces must load as it is (the
// promise of own-kernels.md): findingsOf records each with the files of
// its kernel, and TestMain pastes each into its dispatch after the tests
// and checks the manifest again. A "TODO" suggestion must carry its note
// instead.

// suggestion is one tgm: suggestion and what it was made for.
type suggestion struct {
	test     string
	manifest string            // the manifest's path relative to dir
	files    map[string]string // the manifest's folder, path → content
	line     int               // the dispatch's line
	items    string            // "[{name: s, bytes: 128}]"
	msg      string
}

var (
	suggestionsMu sync.Mutex
	suggestions   []suggestion
)

var suggestionRE = regexp.MustCompile("add e\\.g\\. `tgm: (\\[.*?\\])`")

// recordSuggestions keeps r's tgm: suggestions for TestMain.
func recordSuggestions(r Result) {
	for _, f := range r.Findings {
		m := suggestionRE.FindStringSubmatch(f.Msg)
		if m == nil || r.Family == nil {
			continue
		}
		dir := filepath.Dir(r.Family.Path())
		files := map[string]string{}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
				rel, _ := filepath.Rel(dir, p)
				files[rel] = string(b)
			}
			return nil
		})
		suggestionsMu.Lock()
		suggestions = append(suggestions, suggestion{test: filepath.Base(filepath.Dir(dir)), manifest: filepath.Base(r.Family.Path()), files: files, line: f.Line, items: m[1], msg: f.Msg})
		suggestionsMu.Unlock()
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		for _, err := range checkSuggestions() {
			fmt.Fprintln(os.Stderr, "FAIL: a tgm: suggestion does not load as it is:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkSuggestions pastes each recorded suggestion into its dispatch and
// checks the manifest again: it must load with no tgm: warning left.
func checkSuggestions() []error {
	var errs []error
	for _, s := range suggestions {
		if strings.Contains(s.items, `"TODO"`) {
			if !strings.Contains(s.msg, "(TODO: ") {
				errs = append(errs, fmt.Errorf("%s: a TODO without its note: %s", s.test, s.msg))
			}
			continue
		}
		text, err := pasteTGM(s.files[s.manifest], s.line, s.items)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", s.test, err))
			continue
		}
		dir, err := os.MkdirTemp("", "suggestion")
		if err != nil {
			return append(errs, err)
		}
		for p, c := range s.files {
			if p == s.manifest {
				c = text
			}
			_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
			_ = os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
		}
		r := Check(filepath.Join(dir, s.manifest), Options{Static: true}).Manifests[0]
		found := findingsOf(r)
		if r.Broken() || strings.Contains(found, "lists no tgm: items") || strings.Contains(found, "TGM item ") {
			errs = append(errs, fmt.Errorf("%s: tgm: %s:\n%s", s.test, s.items, found))
		}
		os.RemoveAll(dir)
	}
	return errs
}

// pasteTGM adds `tgm: items` to the dispatch at line (1-based) of a
// manifest: inside a flow mapping `- {…}`, or as a key after the line.
func pasteTGM(manifest string, line int, items string) (string, error) {
	lines := strings.Split(manifest, "\n")
	if line < 1 || line > len(lines) {
		return "", fmt.Errorf("line %d is not in the manifest", line)
	}
	l := lines[line-1]
	trimmed := strings.TrimSpace(l)
	if strings.HasPrefix(trimmed, "- {") && strings.HasSuffix(trimmed, "}") {
		k := strings.LastIndex(l, "}")
		lines[line-1] = l[:k] + ", tgm: " + items + l[k:]
		return strings.Join(lines, "\n"), nil
	}
	indent := len(l) - len(strings.TrimLeft(l, " ")) + 2 // the keys after "- "
	add := strings.Repeat(" ", indent) + "tgm: " + items
	lines = append(lines[:line], append([]string{add}, lines[line:]...)...)
	return strings.Join(lines, "\n"), nil
}

func TestPasteTGM(t *testing.T) {
	flow := "dispatches:\n  - {entry: k, grid: [rows], threads: [WG], args: [X]}\n"
	got, _ := pasteTGM(flow, 2, "[{name: s, bytes: 4}]")
	if want := "  - {entry: k, grid: [rows], threads: [WG], args: [X], tgm: [{name: s, bytes: 4}]}"; !strings.Contains(got, want) {
		t.Errorf("flow: %q", got)
	}
	block := "dispatches:\n  - entry: k\n    grid: [rows]\n"
	got, _ = pasteTGM(block, 2, "[{name: s, bytes: 4}]")
	if want := "  - entry: k\n    tgm: [{name: s, bytes: 4}]\n    grid: [rows]"; !strings.Contains(got, want) {
		t.Errorf("block: %q", got)
	}
}
