package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sweep"
)

const (
	listSummary = "backends found and kernel families with their schemas"
	listHelp    = `  mltop list [NAME…]                    backends found (and why a missing one is missing),
                                        kernel families with their knobs, dims and dtypes;
                                        NAME…: just those kernels; --kernel DIR: yours first
`
)

type listArgs struct {
	kernels kernelPaths
	backend string
}

func (a *listArgs) declare(fs *flag.FlagSet) {
	fs.Var(&a.kernels, "kernel", "")
	fs.StringVar(&a.backend, "backend", "auto", "")
	registerNoopFlags(fs)
}

// runList prints the backends found, the tools user kernels use and every
// kernel family's schema; with names, just those families; with --kernel,
// the user's kernels first and a one-line count of the built-in ones.
func runList(ctx context.Context, s *session, a *listArgs, pos []string) error {
	stdout, backend := s.stdout, &a.backend
	for _, p := range pos {
		// A path is a user kernel: it belongs after --kernel.
		if _, err := os.Stat(p); err == nil || strings.ContainsAny(p, "/\\") || strings.HasSuffix(p, ".yaml") {
			return badInput("list takes kernel names, got the path %q: to add a user kernel write mltop list --kernel %s", p, p)
		}
	}
	if !slices.Contains(sweep.KnownBackends, *backend) {
		return badInput("unknown backend %q: use one of %s", *backend, strings.Join(sweep.KnownBackends, ", "))
	}
	builtin := familyNames()
	broken := s.loadUserKernelsReporting(a.kernels)
	var userNames []string
	for _, n := range familyNames() {
		if !slices.Contains(builtin, n) {
			userNames = append(userNames, n)
		}
	}
	if len(pos) > 0 {
		for _, name := range pos {
			f, err := profiler.Lookup(name)
			if err != nil {
				return badInput("list: %v", err)
			}
			printFamily(stdout, f)
		}
		return nil
	}
	printBackends(stdout, *backend)
	fmt.Fprintln(stdout)
	printTools(ctx, stdout, "")
	fmt.Fprintln(stdout, "\nKernel families:")
	shown := builtin
	if len(a.kernels) > 0 {
		shown = userNames
	}
	for _, name := range shown {
		f, err := profiler.Lookup(name)
		if err != nil {
			return err
		}
		printFamily(stdout, f)
	}
	if len(a.kernels) > 0 {
		fmt.Fprintf(stdout, "\n  and %s (mltop list NAME shows one, mltop list without --kernel shows all)\n", profiler.Plural(len(builtin), "built-in kernel family", "built-in kernel families"))
	}
	if len(broken) > 0 {
		fmt.Fprintf(stdout, "\nManifests that do not load (%d; the others above did):\n", len(broken))
		writeBroken(stdout, broken)
		var paths []string
		for _, r := range broken {
			paths = append(paths, r.Manifest)
		}
		return &exitError{code: exitBadInput, msg: fmt.Sprintf("%s: does not load (see above); mltop check PATH says more", strings.Join(paths, ", "))}
	}
	return nil
}

// familyNames are the registered families' names, sorted.
func familyNames() []string {
	var out []string
	for _, f := range profiler.Families(false) {
		out = append(out, f.Name())
	}
	return out
}

// printBackends lists the backends found, which auto picks, and what
// --backend picks.
func printBackends(w io.Writer, backend string) {
	fmt.Fprintln(w, "Backends:")
	for _, b := range probeBackends() {
		mark := "found  "
		if !b.available {
			mark = "missing"
		}
		fmt.Fprintf(w, "  %-6s %s  %s\n", b.name, mark, b.reason)
	}
	fmt.Fprintf(w, "  auto picks: %s\n", resolveBackend("auto"))
	if backend != "auto" {
		fmt.Fprintf(w, "  --backend %s: %s\n", backend, resolveBackend(backend))
	}
}

// printFamily is one family's schema: dtypes, knobs, dims, flags, rules.
func printFamily(w io.Writer, f profiler.Family) {
	sc := f.Schema()
	fmt.Fprintf(w, "\n  %s — %s\n    dtypes: %s\n", f.Name(), f.Doc(), profiler.JoinDTypes(sc.DTypes))
	printParams(w, "knobs", sc.Knobs)
	printParams(w, "dims", sc.Dims)
	if len(sc.Flags) > 0 {
		fmt.Fprintln(w, "    flags:")
		for _, fl := range sc.Flags {
			fmt.Fprintf(w, "      %-8s default %-5t %s\n", fl.Name, fl.Default, fl.Doc)
		}
	}
	if r, ok := f.(interface{ Rules() []string }); ok && len(r.Rules()) > 0 {
		fmt.Fprintln(w, "    rules (a spec must satisfy each):")
		for _, rule := range r.Rules() {
			fmt.Fprintf(w, "      %s\n", rule)
		}
	}
}

func printParams(w io.Writer, title string, ps []profiler.Param) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "    %s:\n", title)
	for _, p := range ps {
		def := strconv.Itoa(p.Default)
		for _, d := range []profiler.DType{profiler.F32, profiler.F16, profiler.BF16} {
			if v, ok := p.ByDType[d]; ok {
				def += fmt.Sprintf(" (%s: %d)", d, v)
			}
		}
		if p.Follows != "" {
			def += " (or " + p.Follows + ")"
		}
		fmt.Fprintf(w, "      %-8s %-28s default %-6s %s\n", p.Name, p.Describe(), def, p.Doc)
	}
}
