package cli

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

// registerNoopFlags lets commands that print no colour and no progress
// take --no-color and --quiet, so that flags a user keeps on every command
// line do not fail them.
func registerNoopFlags(fs *flag.FlagSet) {
	fs.Bool("no-color", false, "")
	fs.Bool("quiet", false, "")
}

// commandLabel names a command in messages.
func commandLabel(cmd string) string {
	if cmd == "" {
		return "mltop"
	}
	return "mltop " + cmd
}

// sweepOnly are flags of mltop itself that only a --config sweep uses.
var sweepOnly = map[string]bool{"config": true, "devices": true, "shard": true, "claims": true, "resume": true, "yes": true}

// flagError turns a flag package error of command cmd into one line:
// the flag, a did-you-mean or the commands that take it, and where the
// full list is. Never the whole usage.
func flagError(cmd string, err error) error {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if m := badSettingRE.FindStringSubmatch(msg); m != nil {
		// A measurement setting says what it takes in the words a sweep file's key gets.
		if st, ok := profiler.LookupSetting(m[2]); ok {
			var se *profiler.SettingError
			if _, perr := st.Parse(m[1]); errors.As(perr, &se) {
				prefix := ""
				if cmd != "" {
					prefix = cmd + ": "
				}
				return badInput("%s%s; see mltop --help", prefix, se.Message(flagName))
			}
		}
	}
	if m := badValueRE.FindStringSubmatch(msg); m != nil {
		if want := flagWants(cmd, m[2]); want != "" {
			prefix := ""
			if cmd != "" {
				prefix = cmd + ": "
			}
			return badInput("%s--%s %q: use %s; see mltop --help", prefix, m[2], m[1], want)
		}
	}
	if !strings.HasPrefix(msg, undefined) {
		msg = strings.ReplaceAll(msg, "flag -", "flag --")
		msg = strings.ReplaceAll(msg, "argument: -", "argument: --")
		if cmd != "" {
			msg = cmd + ": " + msg
		}
		return badInput("%s; see mltop --help", msg)
	}
	name := strings.TrimPrefix(msg, undefined)
	return badInput("%s", unknownFlag(cmd, name))
}

// badValueRE matches the flag package's message for a value that does not
// parse as the flag's type ("parse error" says nothing of what would).
var badValueRE = regexp.MustCompile(`^invalid value "(.*)" for flag -([\w-]+): (?:parse error|value out of range)`)

// badSettingRE matches the flag package's message for any value a flag's
// Set refuses, booleans included.
var badSettingRE = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([\w-]+): `)

// flagWants says what a numeric flag of cmd takes, "" for other flags.
func flagWants(cmd, name string) string {
	fs := flagsOf(cmd)
	if fs == nil {
		return ""
	}
	f := fs.Lookup(name)
	if f == nil {
		return ""
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case float64:
		return fmt.Sprintf("a number (default %s)", f.DefValue)
	case int:
		return fmt.Sprintf("a whole number (default %s)", f.DefValue)
	case uint64:
		return fmt.Sprintf("a whole number, 0 or more (default %s)", f.DefValue)
	}
	return ""
}

// unknownFlag is the message for --name, which cmd does not take.
func unknownFlag(cmd, name string) string {
	var takers []string
	for _, c := range commandNames {
		if c == cmd {
			continue
		}
		if fs := flagsOf(c); fs != nil && fs.Lookup(name) != nil {
			takers = append(takers, c)
		}
	}
	head := "unknown flag --" + name
	if cmd != "" {
		head = cmd + ": " + head
	}
	switch {
	case name == "config" && len(takers) > 0 && takers[0] == "":
		// --config is the sweep itself, not an option of this command.
		return fmt.Sprintf("%s: a sweep file runs on its own, as mltop --config FILE [--csv out.csv], not with %s; see mltop --help", head, commandLabel(cmd))
	case len(takers) > 0 && takers[0] == "" && sweepOnly[name]:
		return fmt.Sprintf("%s: --%s is a sweep flag: use it with --config FILE (mltop --config FILE --%s …); see mltop --help", head, name, name)
	case len(takers) > 0:
		labels := make([]string, len(takers))
		for i, c := range takers {
			labels[i] = commandLabel(c)
		}
		return fmt.Sprintf("%s: --%s is a flag of %s; see mltop --help", head, name, strings.Join(labels, ", "))
	}
	if near := nearestFlag(flagsOf(cmd), name); near != "" {
		return fmt.Sprintf("%s: did you mean --%s? see mltop --help", head, near)
	}
	// A typo of another command's flag.
	for _, c := range commandNames {
		if c == cmd {
			continue
		}
		if near := nearestFlag(flagsOf(c), name); near != "" {
			return fmt.Sprintf("%s: did you mean --%s (a flag of %s)? see mltop --help", head, near, commandLabel(c))
		}
	}
	return head + "; see mltop --help"
}

// nearestCommand is the subcommand closest to name, "" when none is close.
func nearestCommand(name string) string {
	for _, c := range commandNames {
		if c != "" && editDistance(name, c) <= 2 {
			return c
		}
	}
	return ""
}

// nearestFlag is fs's flag closest to name, "" when none is close: an
// edit distance of at most 1 for short names, 2 from 5 letters on.
func nearestFlag(fs *flag.FlagSet, name string) string {
	if fs == nil {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	sort.Strings(names)
	best, bestD := "", 1
	if len(name) >= 5 {
		bestD = 2
	}
	for _, n := range names {
		if len(n) < 2 {
			continue // -o: every one-letter typo is "close"
		}
		if d := editDistance(name, n); d <= bestD && (best == "" || d < editDistance(name, best)) {
			best = n
		}
	}
	return best
}

// editDistance is profiler.EditDistance, the one measure of "close" that
// every did-you-mean uses.
func editDistance(a, b string) int { return profiler.EditDistance(a, b) }

// hoistCommand finds a subcommand after leading flags of mltop itself
// (`mltop --backend cpu list`) and returns it with those flags moved after
// it, where the subcommand parses them (and names any it does not take).
func hoistCommand(args []string) (cmd string, rest []string) {
	main := flagsOf("")
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name := strings.TrimLeft(a, "-")
		if k := strings.IndexByte(name, '='); k >= 0 {
			i++
			continue
		}
		f := main.Lookup(name)
		if f == nil {
			return "", args // mltop reports it
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			i++
		} else {
			i += 2
		}
	}
	if i < len(args) && isCommand(args[i]) {
		rest = append(append([]string{}, args[i+1:]...), args[:i]...)
		return args[i], rest
	}
	return "", args
}

// noArgs refuses arguments of a subcommand that takes none, instead of
// ignoring them; a backend's name points to --backend.
func noArgs(cmd string, pos []string) error {
	if len(pos) == 0 {
		return nil
	}
	if slices.Contains(sweep.KnownBackends, pos[0]) {
		return badInput("%s takes no arguments, got %q: to pick the backend write mltop %s --backend %s", cmd, pos, cmd, pos[0])
	}
	return badInput("%s takes no arguments, got %q: see mltop --help", cmd, pos)
}
