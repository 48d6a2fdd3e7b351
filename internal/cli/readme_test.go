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

// TestReadmeNamesWhatExists: every `--flag` the README names is a flag of
// some mltop command (other tools' flags excepted) and every flag of mltop
// and run has a row in its Flags table, every MLTOP_ variable
// it names is read somewhere in the code or its tests, every CSV column mltop writes
// is in its CSV table, and every sweep in configs/ is named. A newcomer
// reads the README first: a renamed flag or a new config must not leave
// it behind.
func TestReadmeNamesWhatExists(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)

	// Flags of other tools the README quotes.
	foreign := map[string]bool{
		"array":         true, // sbatch
		"cache-control": true, // ncu
		"clock-control": true, // ncu
		"lgc":           true, // nvidia-smi
		"lineinfo":      true, // NVRTC
	}
	for _, m := range regexp.MustCompile("`--?([a-z][a-z-]*)").FindAllStringSubmatch(readme, -1) {
		name := m[1]
		if foreign[name] {
			continue
		}
		found := false
		for _, c := range commandNames {
			if fs := flagsOf(c); fs != nil && fs.Lookup(name) != nil {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README names `--%s`, which no mltop command takes", name)
		}
	}

	// And the other way: each flag of mltop and run has a row in the
	// Flags table, as the README says.
	for _, c := range []string{"", "run"} {
		flagsOf(c).VisitAll(func(f *flag.Flag) {
			if !strings.Contains(readme, "\n| `--"+f.Name) {
				t.Errorf("README's Flags table has no row for --%s (a flag of %s)", f.Name, commandLabel(c))
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
	for _, env := range regexp.MustCompile(`MLTOP_[A-Z_]+[A-Z]`).FindAllString(readme, -1) {
		if !strings.Contains(code.String(), `"`+env+`"`) {
			t.Errorf("README names %s, which no Go file reads", env)
		}
	}

	_, csvSection, _ := strings.Cut(readme, "## CSV columns")
	csvSection, _, _ = strings.Cut(csvSection, "\n## ")
	var table strings.Builder // the table's rows, not the prose around it
	for _, l := range strings.Split(csvSection, "\n") {
		if strings.HasPrefix(l, "| ") {
			table.WriteString(l + "\n")
		}
	}
	for _, col := range sink.FixedColumns() {
		if !strings.Contains(table.String(), "`"+col+"`") {
			t.Errorf("README's CSV columns table lacks `%s`", col)
		}
	}

	configs, _ := filepath.Glob("configs/*.yaml")
	if len(configs) == 0 {
		t.Fatal("no configs/*.yaml")
	}
	for _, c := range configs {
		if !strings.Contains(readme, "`"+filepath.Base(c)+"`") && !strings.Contains(readme, c) {
			t.Errorf("README does not name %s", c)
		}
	}
}
