package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/pyref"
)

const (
	checkSummary = "check user kernels without a GPU: manifest, sources, plan, compile, Python reference"
	checkHelp    = `  mltop check PATH… [--arch sm_XY] [--quiet] [--run [--set K=V,...] [--dtype D]]
                                        checks each kernel.yaml (or every one under a folder)
                                        without a GPU: the manifest loads, the sources match it,
                                        NVRTC / the MSL emulation compile them where present,
                                        ref.py runs on a tiny shape; exit 1 on a failed step,
                                        2 on a broken manifest or a default spec over
                                        1024 threads per group; --quiet hides notes
                                        --run also runs each Metal kernel's default spec (with
                                        --set/--dtype) on the MSL emulation and compares its
                                        outputs with the reference: exit 1 on a mismatch or a
                                        failed step (not run then), 2 when it cannot run; CUDA
                                        runs only where a GPU is found
`
)

// checkArchRE is what NVRTC's --gpu-architecture takes; checked here so a
// typo is refused on a machine without NVRTC too, where the compile step
// that would refuse it is skipped.
var checkArchRE = regexp.MustCompile(`^(sm|compute)_\d+[a-z]?$`)

type checkArgs struct {
	arch  string
	quiet bool
	// run, sets and dtype: --run runs each manifest's spec (its defaults
	// with --set and --dtype) after the checks.
	run   bool
	sets  []string
	dtype string
}

func (a *checkArgs) declare(fs *flag.FlagSet) {
	fs.StringVar(&a.arch, "arch", cuda.DefaultCheckArch, "")
	fs.BoolVar(&a.quiet, "quiet", false, "")
	fs.BoolVar(&a.run, "run", false, "")
	fs.Func("set", "", func(s string) error { a.sets = append(a.sets, s); return nil })
	fs.StringVar(&a.dtype, "dtype", "", "")
}

// runCheck checks every path and exits with the worst verdict.
func runCheck(ctx context.Context, s *session, a *checkArgs, pos []string) error {
	if len(pos) == 0 {
		return badInput("check needs a kernel.yaml or a folder of them: mltop check ./my_kernel")
	}
	if !checkArchRE.MatchString(a.arch) {
		return badInput("--arch %q: give an NVRTC architecture such as sm_80, sm_90 or sm_90a (compute_90 for PTX only)", a.arch)
	}
	if !a.run && (len(a.sets) > 0 || a.dtype != "") {
		return badInput("--set and --dtype pick the spec that --run runs: add --run, e.g. mltop check --run --set rows=64 %s", pos[0])
	}
	min := lint.Note
	if a.quiet {
		min = lint.Warning
	}
	runner := &checkRunner{s: s, a: a}
	defer runner.close()
	code, runCode := 0, 0
	passed := false // a manifest's static verdict was ok
	for i, p := range pos {
		if ctx.Err() != nil {
			return &exitError{code: exitFailed, msg: "cancelled (ctrl-C or SIGTERM)"}
		}
		if i > 0 {
			fmt.Fprintln(s.stdout)
		}
		rep := lint.Check(p, lint.Options{Context: ctx, Arch: a.arch})
		for j, m := range rep.Manifests {
			if j > 0 {
				fmt.Fprintln(s.stdout)
			}
			lint.Report{Path: rep.Path, Manifests: []lint.Result{m}}.Write(s.stdout, min)
			passed = passed || m.Passed()
			if a.run && ctx.Err() == nil {
				runCode = max(runCode, runner.runManifest(ctx, s.stdout, m))
			}
		}
		code = max(code, rep.ExitCode())
	}
	if ctx.Err() != nil {
		return &exitError{code: exitFailed, msg: "cancelled (ctrl-C or SIGTERM)"}
	}
	if passed && !a.run && !a.quiet {
		// "ok" is check's steps' verdict; a kernel with a wrong index
		// passes them all (the examples' broken twins do).
		fmt.Fprintln(s.stdout, "\n"+notRunNote)
	}
	switch {
	case code == 2:
		return &exitError{code: exitBadInput, msg: "a manifest does not load, its default spec runs on no GPU, or --arch names an architecture NVRTC does not know: fix the errors above"}
	case runCode == 2:
		return &exitError{code: exitBadInput, msg: "a kernel did not run: see the lines above"}
	case runCode == 1:
		return &exitError{code: exitFailed, msg: "a kernel ran wrong (a mismatch, a crash or an error): see the lines above"}
	case code == 1:
		return &exitError{code: exitFailed, msg: "a check failed: see the errors above"}
	}
	return nil
}

// printTools says what user kernels can use here: the CUDA toolkit's
// headers (and NVRTC) and the Python that runs references.
func printTools(ctx context.Context, w io.Writer, indent string) {
	fmt.Fprintf(w, "%sCUDA toolkit for user kernels:\n", indent)
	for _, l := range strings.Split(cuda.Toolkit().String(), "\n") {
		fmt.Fprintf(w, "%s  %s\n", indent, l)
	}
	st := pyref.Probe(ctx)
	fmt.Fprintf(w, "%sPython for references (%s): %s\n", indent, pyref.PythonEnv, st)
}

// notRunNote closes a `check` without --run whose manifests passed: ok
// there means loaded, compiled and referenced, not verified.
const notRunNote = "check ran no kernel: `mltop check --run` runs each default spec (on a GPU, else on the MSL or CUDA emulation) against its reference; `mltop run` also times it"
