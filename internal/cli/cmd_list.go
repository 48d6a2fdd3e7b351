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
	listHelp    = `  mltop list                            backends found (and why a missing one is missing),
                                        kernel families with their knobs, dims and dtypes
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

// runList prints the backends found and every kernel family's schema.
func runList(ctx context.Context, s *session, a *listArgs, pos []string) error {
	stdout, kernels, backend := s.stdout, a.kernels, &a.backend
	if len(pos) > 0 {
		// Ignoring them would print everything as if they meant nothing.
		if _, err := os.Stat(pos[0]); err == nil || strings.ContainsAny(pos[0], "/\\") || strings.HasSuffix(pos[0], ".yaml") {
			return badInput("list takes no arguments, got %q: to add a user kernel write mltop list --kernel %s", pos, pos[0])
		}
		return badInput("list takes no arguments, got %q: run mltop list alone (it prints every backend and kernel family, with each one's knobs, dims and dtypes)", pos)
	}
	if !slices.Contains(sweep.KnownBackends, *backend) {
		return badInput("unknown backend %q: use one of %s", *backend, strings.Join(sweep.KnownBackends, ", "))
	}
	broken := s.loadUserKernelsReporting(kernels)
	fmt.Fprintln(stdout, "Backends:")
	for _, b := range probeBackends() {
		mark := "found  "
		if !b.available {
			mark = "missing"
		}
		fmt.Fprintf(stdout, "  %-6s %s  %s\n", b.name, mark, b.reason)
	}
	fmt.Fprintf(stdout, "  auto picks: %s\n", resolveBackend("auto"))
	if *backend != "auto" {
		fmt.Fprintf(stdout, "  --backend %s: %s\n", *backend, resolveBackend(*backend))
	}
	fmt.Fprintln(stdout)
	printTools(ctx, stdout, "")
	fmt.Fprintln(stdout, "\nKernel families:")
	for _, f := range profiler.Families(false) {
		sc := f.Schema()
		dts := make([]string, len(sc.DTypes))
		for i, d := range sc.DTypes {
			dts[i] = string(d)
		}
		fmt.Fprintf(stdout, "\n  %s — %s\n    dtypes: %s\n", f.Name(), f.Doc(), strings.Join(dts, ", "))
		printParams(stdout, "knobs", sc.Knobs)
		printParams(stdout, "dims", sc.Dims)
		if len(sc.Flags) > 0 {
			fmt.Fprintln(stdout, "    flags:")
			for _, fl := range sc.Flags {
				fmt.Fprintf(stdout, "      %-8s default %-5t %s\n", fl.Name, fl.Default, fl.Doc)
			}
		}
		if r, ok := f.(interface{ Rules() []string }); ok && len(r.Rules()) > 0 {
			fmt.Fprintln(stdout, "    rules (a spec must satisfy each):")
			for _, rule := range r.Rules() {
				fmt.Fprintf(stdout, "      %s\n", rule)
			}
		}
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
