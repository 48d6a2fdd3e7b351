package cli

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler/sink"
)

// docFiles are the user and contributor docs: README.md, CONTRIBUTING.md
// and docs/*.md (not docs/incoming/, where notes wait to be merged).
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob("docs/*.md")
	paths = append(paths, "README.md", "CONTRIBUTING.md")
	docs := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = string(b)
	}
	if len(docs) < 5 {
		t.Fatalf("only %d doc files: is docs/ there?", len(docs))
	}
	return docs
}

// Flags of other tools the docs quote.
var foreignFlags = map[string]bool{
	"array":         true, // sbatch
	"cache-control": true, // ncu
	"clock-control": true, // ncu
	"lgc":           true, // nvidia-smi
	"lineinfo":      true, // NVRTC
	"update":        true, // go test, for the golden files
}

var flagMention = regexp.MustCompile("`--?([a-z][a-z-]*)")

// anyCommandTakes: some mltop command has flag name.
func anyCommandTakes(name string) bool {
	for _, c := range commandNames {
		if fs := flagsOf(c); fs != nil && fs.Lookup(name) != nil {
			return true
		}
	}
	return false
}

// TestDocsNameWhatExists: every `--flag` the docs name is a flag of some
// mltop command (other tools' flags excepted) and every flag of every
// command has a row in docs/commands.md, every MLTOP_ variable they name
// is read somewhere in the code or its tests, every CSV column mltop
// writes is in docs/sweeps.md's CSV table, and every sweep in configs/ is
// named. A renamed flag or a new config must not leave the docs behind.
func TestDocsNameWhatExists(t *testing.T) {
	docs := docFiles(t)
	var all strings.Builder
	for p, d := range docs {
		all.WriteString(d)
		for _, m := range flagMention.FindAllStringSubmatch(d, -1) {
			if name := m[1]; !foreignFlags[name] && !anyCommandTakes(name) {
				t.Errorf("%s names `--%s`, which no mltop command takes", p, name)
			}
		}
	}
	text := all.String()

	commands := docs["docs/commands.md"]
	for _, c := range commandNames {
		flagsOf(c).VisitAll(func(f *flag.Flag) {
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			if !strings.Contains(commands, "\n| `"+dash+f.Name) {
				t.Errorf("docs/commands.md has no flag row for %s%s (a flag of %s)", dash, f.Name, commandLabel(c))
			}
		})
	}

	var code strings.Builder
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") { // tests too: MLTOP_METAL_CPP is a test's
			src, _ := os.ReadFile(path)
			code.Write(src)
		}
		return nil
	})
	// An MLTOP_ name is an environment variable a Go file reads ("MLTOP_X"),
	// or a name mltop writes into generated code (the tuning header's
	// MLTOP_BF16): either way it must be in the Go source, whole.
	for _, env := range regexp.MustCompile(`MLTOP_[A-Z0-9_]*[A-Z0-9]`).FindAllString(text, -1) {
		if !strings.Contains(code.String(), `"`+env+`"`) && !regexp.MustCompile(`\b`+env+`\b`).MatchString(code.String()) {
			t.Errorf("the docs name %s, which no Go file reads or writes", env)
		}
	}

	table := tableRows(section(docs["docs/sweeps.md"], "## CSV columns"))
	if table == "" {
		t.Error(`docs/sweeps.md has no "## CSV columns" table`)
	}
	for _, col := range sink.FixedColumns() {
		if !strings.Contains(table, "`"+col+"`") {
			t.Errorf("docs/sweeps.md's CSV columns table lacks `%s`", col)
		}
	}

	configs, _ := filepath.Glob("configs/*.yaml")
	if len(configs) == 0 {
		t.Fatal("no configs/*.yaml")
	}
	for _, c := range configs {
		if !strings.Contains(text, "`"+filepath.Base(c)+"`") && !strings.Contains(text, c) {
			t.Errorf("no doc names %s", c)
		}
	}
}

// section is the text under heading (a whole "## …" line prefix) up to the
// next heading of the same level.
func section(doc, heading string) string {
	_, s, ok := strings.Cut(doc, "\n"+heading)
	if !ok {
		return ""
	}
	s, _, _ = strings.Cut(s, "\n"+heading[:strings.Index(heading, " ")+1])
	return s
}

// tableRows keeps a text's table rows, not the prose around them.
func tableRows(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "| ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// commandLines are the mltop command lines a doc shows: lines of fenced
// code blocks and inline code spans that start with mltop, ./mltop or
// `go run .`, cut at pipes, && and ; and stripped of trailing # comments.
func commandLines(doc string) []string {
	var cands []string
	inFence := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			cands = append(cands, l)
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(l, -1) {
			cands = append(cands, m[1])
		}
	}
	start := regexp.MustCompile(`^(?:\./)?mltop(?:\s|$)|^go run \.(?:\s|$)`)
	var lines []string
	for _, c := range cands {
		if i := strings.Index(c, " #"); i >= 0 {
			c = c[:i]
		}
		for _, part := range regexp.MustCompile(`\|\||&&|;|\|`).Split(c, -1) {
			part = strings.TrimSpace(part)
			if loc := start.FindStringIndex(part); loc != nil {
				lines = append(lines, strings.TrimSpace(part[loc[1]:]))
			}
		}
	}
	return lines
}

// hiddenCommands run but are not listed: the worker subprocess and help.
var hiddenCommands = map[string]bool{"worker": true, "help": true}

// checkCommandLine: the command a doc's mltop line names exists, and each
// flag on it is a flag of that command. It returns what is wrong.
func checkCommandLine(args string) []string {
	fields := strings.Fields(args)
	cmd, word := "", commandWord(fields)
	switch {
	case hiddenCommands[word]:
		return nil
	case isCommand(word):
		cmd = word
	case regexp.MustCompile(`^[a-z]+$`).MatchString(word):
		return []string{"unknown command " + word}
	}
	var bad []string
	fs := flagsOf(cmd)
	for _, f := range fields {
		m := regexp.MustCompile(`^--?([a-z][a-z-]*)(=.*)?$`).FindStringSubmatch(f)
		if m == nil || foreignFlags[m[1]] {
			continue
		}
		if fs.Lookup(m[1]) == nil {
			bad = append(bad, commandLabel(cmd)+" takes no "+f)
		}
	}
	return bad
}

// commandWord is the first argument that is neither a flag nor a flag's
// value (--backend cpu list: list): where mltop looks for its subcommand.
func commandWord(fields []string) string {
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if !strings.HasPrefix(f, "-") {
			return f
		}
		name := strings.TrimLeft(f, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if !isBoolFlag(name) {
			i++ // its value
		}
	}
	return ""
}

// isBoolFlag: some command has name as a flag that takes no value.
func isBoolFlag(name string) bool {
	for _, c := range commandNames {
		if fl := flagsOf(c).Lookup(name); fl != nil {
			b, ok := fl.Value.(interface{ IsBoolFlag() bool })
			return ok && b.IsBoolFlag()
		}
	}
	return false
}

// TestDocsCommandLinesExist: every mltop command line in the docs names a
// real command, with flags that command takes.
func TestDocsCommandLinesExist(t *testing.T) {
	n := 0
	for p, d := range docFiles(t) {
		for _, l := range commandLines(d) {
			n++
			for _, bad := range checkCommandLine(l) {
				t.Errorf("%s: `mltop %s`: %s", p, l, bad)
			}
		}
	}
	if n < 30 {
		t.Errorf("found only %d mltop command lines in the docs: is commandLines broken?", n)
	}
}

// The command-line check catches what it is for.
func TestDocsCommandLineCheckCatches(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"run attn_fwd --set BQ=32 --dtype bf16", ""},
		{"--backend cpu list", ""},
		{"--backend cpu list --set BQ=32", "mltop list takes no --set"},
		{"--quiet rnu", "unknown command rnu"},
		{"--config s.yaml --csv out.csv", ""},
		{"merge a.csv -o all.csv --config s.yaml", ""},
		{"worker", ""},
		{"rnu attn_fwd", "unknown command rnu"},
		{"run attn_fwd --shard 0/2", "mltop run takes no --shard"},
		{"list --set BQ=32", "mltop list takes no --set"},
		{"--config s.yaml --frobnicate", "mltop takes no --frobnicate"},
	} {
		got := strings.Join(checkCommandLine(c.line), "; ")
		if got != c.want {
			t.Errorf("checkCommandLine(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	got := commandLines("text `mltop run x --json` and\n```sh\n./mltop list --kernel d   # c\ngo run . selftest && mltop report f.csv\n```\n")
	want := []string{"run x --json", "list --kernel d", "selftest", "report f.csv"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commandLines = %q, want %q", got, want)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlug is GitHub's anchor for a heading: lower case, punctuation
// but - and _ dropped, spaces to hyphens.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("—–·→…’", r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading slugs of a Markdown file (outside code blocks).
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	inFence := false
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if !inFence && strings.HasPrefix(l, "#") {
			out[headingSlug(strings.TrimLeft(l, "#"))] = true
		}
	}
	return out
}

// brokenLinks lists the relative links of the doc at path that do not
// resolve: a missing file, or a #fragment that is no heading of its target.
func brokenLinks(path, doc string, read func(string) (string, error)) []string {
	var bad []string
	for _, m := range mdLink.FindAllStringSubmatch(doc, -1) {
		link := m[1]
		if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
			continue
		}
		file, frag, _ := strings.Cut(link, "#")
		target := path
		if file != "" {
			target = filepath.Join(filepath.Dir(path), file)
		}
		text, err := read(target)
		if err != nil {
			bad = append(bad, link+": "+target+" does not exist")
			continue
		}
		if frag != "" && !anchors(text)[frag] {
			bad = append(bad, link+": "+target+" has no heading #"+frag)
		}
	}
	return bad
}

func readDoc(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", nil
	}
	b, err := os.ReadFile(p)
	return string(b), err
}

// TestDocsLinksResolve: every relative link in README.md, CONTRIBUTING.md
// and docs/*.md names a file that exists, and its #fragment a heading there.
func TestDocsLinksResolve(t *testing.T) {
	n := 0
	for p, d := range docFiles(t) {
		n += len(mdLink.FindAllString(d, -1))
		for _, bad := range brokenLinks(p, d, readDoc) {
			t.Errorf("%s: broken link %s", p, bad)
		}
	}
	if n < 20 {
		t.Errorf("only %d links in the docs: is the link pattern broken?", n)
	}
}

// The link check catches a missing file and a missing heading.
func TestDocsLinkCheckCatches(t *testing.T) {
	files := map[string]string{
		"docs/a.md":  "# A\n\n## Cache modes\n\n```\n# not a heading\n```\n",
		"README.md":  "",
		"docs/b.png": "",
	}
	read := func(p string) (string, error) {
		if s, ok := files[filepath.ToSlash(p)]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	for _, c := range []struct {
		doc  string
		want int
	}{
		{"[a](a.md) [m](a.md#cache-modes) [r](../README.md) [i](b.png) [w](https://x.org/y#z) [s](#a)", 0},
		{"[gone](c.md)", 1},
		{"[frag](a.md#timers)", 1},
		{"[code](a.md#not-a-heading)", 1},
		{"[up](README.md)", 1}, // docs/README.md, not the root one
	} {
		if got := brokenLinks("docs/a.md", c.doc, read); len(got) != c.want {
			t.Errorf("brokenLinks(%q) = %q, want %d", c.doc, got, c.want)
		}
	}
	for h, want := range map[string]string{
		" Your own kernel, end to end": "your-own-kernel-end-to-end",
		" No GPU? What you can check":  "no-gpu-what-you-can-check",
		" Where a spec's time goes":    "where-a-specs-time-goes",
		" FLOP and byte conventions":   "flop-and-byte-conventions",
	} {
		if got := headingSlug(h); got != want {
			t.Errorf("headingSlug(%q) = %q, want %q", h, got, want)
		}
	}
}

// TestReadmeIsShort: the README is a newcomer's page of at most 300 lines
// whose quick start is two commands: one runs mltop, the other the tests,
// and that test command is the one CI runs.
func TestReadmeIsShort(t *testing.T) {
	readme := docFiles(t)["README.md"]
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines: keep it at 300 or fewer and move the rest to docs/", n)
	}
	quick := section(readme, "## Quick start")
	_, block, _ := strings.Cut(quick, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmd, _, _ := strings.Cut(l, " #")
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if len(cmds) != 2 || cmds[0] != "go run ." {
		t.Fatalf("README's quick start should be `go run .` and the test command, got %q", cmds)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmds[1]) + `$`).Match(ci) {
		t.Errorf("README's test command %q is not a line of .ci/run", cmds[1])
	}
}

// TestDocsReadAsDocs: each page says what it is for in one line under
// its title, and no page speaks in the project's internal history.
func TestDocsReadAsDocs(t *testing.T) {
	internal := regexp.MustCompile(`(?i)\bissue \d+|\bseed[ -]?0\d\d\b|\b(this|last|previous|next) session\b`)
	for p, d := range docFiles(t) {
		if m := internal.FindString(d); m != "" {
			t.Errorf("%s says %q: say what the reader needs, not the project's history", p, m)
		}
		if p == "README.md" {
			continue
		}
		lines := strings.SplitN(d, "\n", 5)
		if len(lines) < 5 || !strings.HasPrefix(lines[0], "# ") || lines[1] != "" || lines[2] == "" || lines[3] != "" {
			t.Errorf("%s should start with its title, a blank line and one line saying what the page is for", p)
		}
	}
}

// TestTUIDocShowsTheGolden: docs/tui.md shows the screen the UI test
// renders (ui/testdata/screen.txt), so the picture follows the UI.
func TestTUIDocShowsTheGolden(t *testing.T) {
	frame, err := os.ReadFile("ui/testdata/screen.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(docFiles(t)["docs/tui.md"], "```\n"+string(frame)+"```\n") {
		t.Error("docs/tui.md's capture differs from ui/testdata/screen.txt: paste the file into its code block")
	}
}
