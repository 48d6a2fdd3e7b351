package cli

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"strings"
	"testing"
)

// undocumented lists the flags of c that neither the help text nor c's
// own help lines name (as --name or -name).
func undocumented(help string, c command) []string {
	fs := newFlagSet(commandLabel(c.name))
	c.flags(fs)
	var missing []string
	fs.VisitAll(func(f *flag.Flag) {
		re := regexp.MustCompile(`(^|[\s\[(])--?` + regexp.QuoteMeta(f.Name) + `\b`)
		if !re.MatchString(help) && !re.MatchString(c.help) {
			missing = append(missing, f.Name)
		}
	})
	return missing
}

// TestCommandTable walks the table: every command has a summary, help
// lines, a flag builder and a run function; every shown command appears in
// mltop --help; every flag of every command is named in the help.
func TestCommandTable(t *testing.T) {
	var b bytes.Buffer
	usage(&b)
	help := b.String()
	seen := map[string]bool{}
	for _, c := range commandTable() {
		label := commandLabel(c.name)
		if seen[c.name] {
			t.Errorf("%s is in the table twice", label)
		}
		seen[c.name] = true
		if c.summary == "" || c.help == "" || c.flags == nil || c.run == nil {
			t.Errorf("%s lacks a summary, help lines, a flag builder or a run function", label)
			continue
		}
		if !strings.Contains(c.help, label) {
			t.Errorf("%s's help lines do not name it: %q", label, c.help)
		}
		if !c.hidden && !strings.Contains(help, c.help) {
			t.Errorf("mltop --help lacks %s's lines", label)
		}
		if m := undocumented(help, c); len(m) > 0 {
			t.Errorf("%s takes flags the help does not name: %v", label, m)
		}
		if fs := flagsOf(c.name); fs == nil {
			t.Errorf("flagsOf(%q) is nil", c.name)
		}
	}
	for _, want := range []string{"run", "watch", "list", "new", "report", "merge", "calibrate", "selftest", "worker", "help"} {
		if !seen[want] {
			t.Errorf("the table lacks %s", want)
		}
	}
}

// TestTableChecksCatchBrokenRows: a flag the help does not name is caught,
// and a command missing from the table is no command.
func TestTableChecksCatchBrokenRows(t *testing.T) {
	type args struct{ n int }
	broken := newCommand("frob", "s", "  mltop frob                  frobs\n", func(a *args, fs *flag.FlagSet) { fs.IntVar(&a.n, "frobnicate", 0, "") },
		func(context.Context, *session, *args, []string) error { return nil })
	if m := undocumented("mltop frob", broken); len(m) != 1 || m[0] != "frobnicate" {
		t.Errorf("undocumented = %v, want [frobnicate]", m)
	}
	if isCommand("frob") || flagsOf("frob") != nil {
		t.Error("a command outside the table is found")
	}
	// --no-color is named in mltop --help; -n alone in a word is not --n.
	if m := undocumented("  -no-color  plain", newCommand("x", "s", "h", (*noFlags).declare, func(context.Context, *session, *noFlags, []string) error { return nil })); len(m) != 1 || m[0] != "quiet" {
		t.Errorf("undocumented = %v, want [quiet]", m)
	}
}

// TestFlagsOfDoesNotRun: the flag sets come from the table, so asking for
// them has no effect (the old probe ran each command with -h).
func TestFlagsOfDoesNotRun(t *testing.T) {
	for _, name := range commandNames {
		fs := flagsOf(name)
		if fs == nil {
			t.Fatalf("flagsOf(%q) is nil", name)
		}
		if name == "" && fs.Lookup("config") == nil {
			t.Error("mltop's flags lack --config")
		}
	}
	if flagsOf("watch").Lookup("count") == nil || flagsOf("run").Lookup("count") != nil {
		t.Error("--count must be watch's alone")
	}
}

// TestWorkerArgvHandsOverKernels: a worker's command line names each
// manifest the session loaded, once, as an absolute path, read when the
// worker starts (so a kernel loaded later reaches the next worker).
func TestWorkerArgvHandsOverKernels(t *testing.T) {
	s := newTestSession(nil, nil)
	argv := s.workerArgv("/bin/mltop", "cpu")
	if got := strings.Join(argv(), " "); got != "/bin/mltop worker --backend cpu" {
		t.Errorf("no kernels: %q", got)
	}
	s.kernels.add("/k/a/kernel.yaml")
	s.kernels.add("/k/a/kernel.yaml")
	s.kernels.add("/k/b")
	if got := strings.Join(argv(), " "); got != "/bin/mltop worker --backend cpu --kernel /k/a/kernel.yaml --kernel /k/b" {
		t.Errorf("two kernels: %q", got)
	}
	s.kernels.add("rel/kernel.yaml")
	if last := argv()[len(argv())-1]; !strings.HasPrefix(last, "/") {
		t.Errorf("a relative path is passed as %q, which a worker elsewhere cannot find", last)
	}
}
