package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fencedBlock is the body of the first ```lang block of text.
func fencedBlock(text, lang string) string {
	_, body, ok := strings.Cut(text, "```"+lang+"\n")
	if !ok {
		return ""
	}
	body, _, _ = strings.Cut(body, "```")
	return body
}

// withoutComment is a manifest line without its trailing "  # …" comment,
// so a doc may shorten what `mltop new` writes after it.
func withoutComment(line string) string {
	if i := strings.Index(line, "  #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimRight(line, " ")
}

// applyEdit applies a doc's diff of changed lines (no hunk headers) to a
// file: " x" is a line to find and keep, "-x" a line to find and drop,
// "+x" a line to insert there. Lines are found in order, comments aside;
// the lines passed over are kept.
func applyEdit(file, diff string) (string, error) {
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	var out []string
	next := 0 // the first line of file not yet passed
	for _, d := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if d == "" {
			continue
		}
		op, text := d[0], d[1:]
		if op == '+' {
			out = append(out, text)
			continue
		}
		if op != ' ' && op != '-' {
			return "", fmt.Errorf("diff line %q starts with neither ' ', '-' nor '+'", d)
		}
		i := next
		for i < len(lines) && withoutComment(lines[i]) != withoutComment(text) {
			i++
		}
		if i == len(lines) {
			return "", fmt.Errorf("the file has no line %q after line %d", withoutComment(text), next)
		}
		out = append(out, lines[next:i]...)
		if op == ' ' {
			out = append(out, lines[i])
		}
		next = i + 1
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n") + "\n", nil
}

func TestApplyEdit(t *testing.T) {
	file := "a: 1   # TODO: one\nb: 2\nc: 3\n"
	for _, c := range []struct{ diff, want, err string }{
		{"-a: 1   # TODO: …\n+a: 5\n", "a: 5\nb: 2\nc: 3\n", ""},
		{" b: 2\n+b2: 9\n-c: 3\n", "a: 1   # TODO: one\nb: 2\nb2: 9\n", ""},
		{"-b: 3\n", "", `no line "b: 3"`},
		{"-c: 3\n-a: 1\n", "", `no line "a: 1" after line 3`}, // out of order
		{"*a: 1\n", "", "starts with neither"},
	} {
		got, err := applyEdit(file, c.diff)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("applyEdit(%q): error %v, want one with %q", c.diff, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("applyEdit(%q) = %q, %v; want %q", c.diff, got, err, c.want)
		}
	}
}

// TestOwnKernelsWalkthrough follows docs/own-kernels.md's walkthrough on
// the CPU backend in a scratch folder: the files it copies, `mltop new`,
// the edit of step 2 applied to what new wrote (every line it changes must
// be one new writes), check, run and the sweep. run and the sweep must get
// as far as the CPU backend's refusal of a user kernel, so a knob or dtype
// the steps name that the edited manifest lacks fails here.
func TestOwnKernelsWalkthrough(t *testing.T) {
	doc := section(docFiles(t)["docs/own-kernels.md"], "## Walkthrough")
	steps, edit := fencedBlock(doc, "sh"), fencedBlock(doc, "diff")
	if steps == "" || edit == "" {
		t.Fatal("the walkthrough should have a ```sh block of steps and a ```diff block for step 2")
	}
	dir := t.TempDir()
	local := func(arg string) string { // a path of the steps, in the scratch folder
		if strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "ln") || strings.HasSuffix(arg, ".csv") || strings.HasSuffix(arg, ".yaml") {
			return filepath.Join(dir, arg)
		}
		return arg
	}
	ran := map[string]bool{}
	lines := strings.Split(steps, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if c, _, ok := strings.Cut(l, " #"); ok {
			l = strings.TrimSpace(c)
		}
		for _, cmd := range strings.Split(l, " && ") {
			f := strings.Fields(cmd)
			switch {
			case len(f) == 0 || strings.HasPrefix(f[0], "#"):
			case f[0] == "mkdir":
				os.MkdirAll(local(f[1]), 0o755)
			case f[0] == "cp":
				src, err := os.ReadFile(f[1])
				if err != nil {
					t.Fatalf("step %q: %v", cmd, err)
				}
				os.WriteFile(filepath.Join(local(f[2]), filepath.Base(f[1])), src, 0o644)
			case f[0] == "cat" && len(f) == 4 && f[1] == ">": // cat > FILE <<'END' … END
				end := strings.Trim(f[3], "<'")
				var body []string
				for i++; i < len(lines) && lines[i] != end; i++ {
					body = append(body, lines[i])
				}
				os.WriteFile(local(f[2]), []byte(strings.Join(body, "\n")+"\n"), 0o644)
			case f[0] == "mltop":
				var args []string
				for _, a := range f[1:] {
					args = append(args, local(a))
				}
				word := commandWord(args)
				if word == "" && !strings.Contains(cmd, "--config") {
					continue // the interactive session
				}
				if fs := flagsOf(word); fs != nil && fs.Lookup("backend") != nil {
					args = append(args, "--backend", "cpu")
				}
				code, out, errs := runCLI(t, args...)
				ran[word] = true
				want, say := 0, ""
				if word == "run" || word == "" {
					want, say = 2, "the CPU backend cannot run user kernel my_layernorm"
				}
				if code != want || !strings.Contains(out+errs, say) {
					t.Fatalf("step `%s`: exit %d, want %d and output with %q\n%s\n%s", cmd, code, want, say, out, errs)
				}
				if word == "new" {
					manifest := filepath.Join(dir, "ln", "kernel.yaml")
					written, _ := os.ReadFile(manifest)
					edited, err := applyEdit(string(written), edit)
					if err != nil {
						t.Fatalf("step 2's edit does not fit what `mltop new` writes: %v\n%s", err, written)
					}
					os.WriteFile(manifest, []byte(edited), 0o644)
				}
			default:
				t.Fatalf("the walkthrough's step %q is not one this test knows how to follow", cmd)
			}
		}
	}
	for _, w := range []string{"new", "check", "run", ""} {
		if !ran[w] {
			t.Errorf("the walkthrough has no `mltop %s` step", w)
		}
	}
}
