package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mltop/mltop/backends"
	"github.com/mltop/mltop/cuda/cudaemu"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
)

// maxEmulatedThreads bounds what `check --run` runs on the MSL emulation:
// it starts one OS thread per GPU thread, group after group (tens of
// microseconds each), for several launches a run: 2^16 threads take about
// ten seconds on two cores.
const maxEmulatedThreads = 1 << 16

// maxEmulatedElems bounds the elements of a run's buffers, which go
// through files at every launch and through the Python reference.
const maxEmulatedElems = 1 << 24

// gpuCheckTime bounds the sampling of a CUDA run of `check --run`: the
// run is for the numbers, not for a timing.
const gpuCheckTime = 200 * time.Millisecond

// checkRunner runs the manifests of `mltop check --run`: Metal on the MSL
// emulation (opened once, on first use), CUDA on a GPU where one is found
// and on the CUDA emulation where none is.
type checkRunner struct {
	s    *session
	a    *checkArgs
	emu  *run.Runner
	eb   *mslemu.Backend
	dev  profiler.DeviceInfo
	emuE error // why the emulation cannot run (no g++), once known
	cuda *bool // whether a CUDA GPU is here, once asked
	// the CUDA emulation, as emu, eb, dev and emuE for Metal
	cemu  *run.Runner
	cb    *cudaemu.Backend
	cdev  profiler.DeviceInfo
	cemuE error
}

func (c *checkRunner) close() {
	if c.eb != nil {
		c.eb.Close()
	}
	if c.cb != nil {
		c.cb.Close()
	}
}

// cudaEmulator opens the CUDA emulation on first use.
func (c *checkRunner) cudaEmulator(ctx context.Context) (*run.Runner, error) {
	if c.cemu != nil || c.cemuE != nil {
		return c.cemu, c.cemuE
	}
	c.cdev = cudaemu.EmulatedDevice()
	c.cb, c.cemuE = cudaemu.Open(ctx, c.cdev)
	if c.cemuE != nil {
		return nil, c.cemuE
	}
	c.cemu = run.NewRunner(c.cb)
	return c.cemu, nil
}

// emulator opens the emulation on first use.
func (c *checkRunner) emulator(ctx context.Context) (*run.Runner, error) {
	if c.emu != nil || c.emuE != nil {
		return c.emu, c.emuE
	}
	c.dev = mslemu.EmulatedDevice()
	c.eb, c.emuE = mslemu.Open(ctx, c.dev)
	if c.emuE != nil {
		return nil, c.emuE
	}
	c.eb.NativeBF16 = true // as `check` compiles it: Metal 3.1's bfloat
	c.emu = run.NewRunner(c.eb)
	return c.emu, nil
}

// runManifest runs one checked manifest and prints a line per language
// under its report; it returns the exit code it earns beyond the check's
// own (a failed check, exit 1, is not run and adds nothing: `check` and
// `check --run` agree on it).
func (c *checkRunner) runManifest(ctx context.Context, w io.Writer, m lint.Result) int {
	if m.Broken() {
		return 0 // the report says why; check's exit code already counts it
	}
	langs := m.Family.Languages()
	code := 0
	if slices.Contains(langs, "metal") {
		code = max(code, c.runMetal(ctx, w, m))
	}
	if slices.Contains(langs, "cuda") {
		code = max(code, c.runCUDA(ctx, w, m))
	}
	return code
}

// emulation is one of the CPU emulations --run runs a spec on.
type emulation struct {
	where string // "the MSL emulation"
	how   string // how it runs a GPU thread, for tooBigToEmulate
	// open opens it (once) and returns its runner and device.
	open func(context.Context) (*run.Runner, profiler.DeviceInfo, error)
	// notOpened prints why it could not open, returning the exit code.
	notOpened func(w io.Writer, err error) int
}

// emulatedSpec is what comes before an emulated run: the checks passed,
// the steps the run needs done, the emulation open, the spec read and
// small enough. ok false: it printed why not, and code is the exit code.
func (c *checkRunner) emulatedSpec(ctx context.Context, w io.Writer, m lint.Result, em emulation) (r *run.Runner, spec profiler.Spec, code int, ok bool) {
	if m.Failed() { // exit 1, as `check` alone: the check failed, not the run
		fmt.Fprintf(w, "  => not run on %s: the checks above failed\n", em.where)
		return nil, spec, 0, false
	}
	if why := emulationSkipped(m.Unchecked); why != "" {
		fmt.Fprintf(w, "  => not run on %s: %s\n", em.where, why)
		return nil, spec, exitBadInput, false
	}
	r, dev, err := em.open(ctx)
	if err != nil {
		return nil, spec, em.notOpened(w, err), false
	}
	if spec, err = c.spec(m); err != nil {
		fmt.Fprintf(w, "  => not run on %s: %v\n", em.where, errText(err))
		return nil, spec, exitBadInput, false
	}
	if why := tooBigToEmulate(m, spec, dev, em.how); why != "" {
		small, changed, ok := c.smallerSpec(m, spec)
		if !ok || tooBigToEmulate(m, small, dev, em.how) != "" {
			fmt.Fprintf(w, "  => not run on %s: %s\n", em.where, why)
			return nil, spec, exitBadInput, false
		}
		fmt.Fprintf(w, "  => %s at its default dims is more than %s runs: running at %s instead (--set gives another shape)\n", spec, em.where, strings.Join(changed, ", "))
		spec = small
	}
	return r, spec, 0, true
}

// smallerSpec is spec with the dims the reference's tiny run takes
// (user.Family.TinySpec: each dim lowered while the rules and the plan
// hold), its knobs and flags kept; not ok when --set named a dim (the
// user chose the shape) or no dim could be lowered.
func (c *checkRunner) smallerSpec(m lint.Result, spec profiler.Spec) (profiler.Spec, []string, bool) {
	pairs, _ := setPairs(c.a.sets) // parsed once already: spec came from them
	for _, kv := range pairs {
		if _, isDim := spec.Dims[kv[0]]; isDim {
			return spec, nil, false
		}
	}
	tiny, changed, err := m.Family.TinySpec(spec.DType)
	if err != nil || len(changed) == 0 {
		return spec, nil, false
	}
	small := spec.Clone()
	small.Dims = tiny.Dims
	if m.Family.Validate(small, profiler.DeviceInfo{Backend: "cpu", Name: "mltop check"}) != nil {
		return spec, nil, false
	}
	return small, changed, true
}

// runMetal runs the manifest's spec on the MSL emulation.
func (c *checkRunner) runMetal(ctx context.Context, w io.Writer, m lint.Result) int {
	em := emulation{where: "the MSL emulation", how: "one OS thread per GPU thread",
		open: func(ctx context.Context) (*run.Runner, profiler.DeviceInfo, error) {
			r, err := c.emulator(ctx)
			return r, c.dev, err
		},
		notOpened: func(w io.Writer, err error) int {
			fmt.Fprintf(w, "  => not run on the MSL emulation: %v\n", err)
			return exitBadInput
		}}
	r, spec, code, ok := c.emulatedSpec(ctx, w, m, em)
	if !ok {
		return code
	}
	res := stoppedByContext(ctx, r.Run(ctx, spec, mslemu.Options(), nil))
	return writeRunVerdict(w, "ran on "+em.where, spec, res)
}

// runCUDA runs the manifest's spec on a CUDA GPU when one is here (in a
// worker, as every GPU run), and otherwise says that it needs one.
func (c *checkRunner) runCUDA(ctx context.Context, w io.Writer, m lint.Result) int {
	if c.cuda == nil {
		entry, _ := backends.Lookup("cuda")
		ok, _ := entry.Available()
		c.cuda = &ok
	}
	if !*c.cuda {
		return c.runCUDAEmulated(ctx, w, m)
	}
	if m.Failed() { // exit 1, as `check` alone (runMetal)
		fmt.Fprintf(w, "  => not run on the GPU: the checks above failed\n")
		return 0
	}
	spec, err := c.spec(m)
	if err != nil {
		fmt.Fprintf(w, "  => not run on the GPU: %v\n", errText(err))
		return exitBadInput
	}
	c.s.kernels.add(m.Manifest) // the worker loads it
	exec, err := c.s.openExecutor(ctx, "cuda", "auto")
	if err != nil {
		fmt.Fprintf(w, "  => not run on the GPU: %v\n", errText(err))
		return exitBadInput
	}
	defer exec.Close()
	opt := profiler.DefaultOptions()
	opt.Stop.MaxTime = gpuCheckTime.Seconds()
	res := stoppedByContext(ctx, exec.Run(ctx, spec, opt, nil))
	return writeRunVerdict(w, "ran on the GPU ("+exec.Device().Name+")", spec, res)
}

// runCUDAEmulated runs the manifest's spec on the CUDA emulation, where
// no GPU is found. A construct the emulation cannot run (inline PTX,
// WMMA, a CUB include…) is said, and is no failure: the GPU runs it.
func (c *checkRunner) runCUDAEmulated(ctx context.Context, w io.Writer, m lint.Result) int {
	const noGPU = "no NVIDIA GPU is found here (`mltop list` says why)"
	em := emulation{where: "the CUDA emulation", how: "one fiber per GPU thread, on one core",
		open: func(ctx context.Context) (*run.Runner, profiler.DeviceInfo, error) {
			r, err := c.cudaEmulator(ctx)
			return r, c.cdev, err
		},
		notOpened: func(w io.Writer, err error) int { // as before the emulation: not run, no failure
			fmt.Fprintf(w, "  => CUDA not run: %s, and %v\n", noGPU, err)
			return 0
		}}
	r, spec, code, ok := c.emulatedSpec(ctx, w, m, em)
	if !ok {
		return code
	}
	if plan, err := m.Family.Plan(spec, c.cdev); err == nil {
		for _, d := range slices.Concat(plan.Setup, plan.Dispatches) {
			if d.Zero != "" {
				continue
			}
			var refusal *cudaemu.Refusal
			if err := c.cb.Refuse(d.Program); errors.As(err, &refusal) {
				fmt.Fprintf(w, "  => CUDA not run: %s, and the emulation cannot run this kernel: %v\n", noGPU, refusal)
				return 0
			}
		}
	}
	res := stoppedByContext(ctx, r.Run(ctx, spec, cudaemu.Options(), nil))
	return writeRunVerdict(w, "ran on "+em.where+" (no NVIDIA GPU here)", spec, res)
}

// spec is the spec --run runs for m: the family's defaults, with --dtype
// and --set applied.
func (c *checkRunner) spec(m lint.Result) (profiler.Spec, error) {
	if err := installFamily(m); err != nil {
		return profiler.Spec{}, err
	}
	return parseSpec(m.Family.Name(), c.a.dtype, c.a.sets)
}

// stoppedByContext makes a run that ctrl-C ended `cancelled`, whatever
// the step it stopped (a killed g++ reads as a compile error).
func stoppedByContext(ctx context.Context, res profiler.Result) profiler.Result {
	if ctx.Err() != nil && res.Status != profiler.StatusOK {
		res.Status, res.Error = profiler.StatusCancelled, "stopped by ctrl-C or SIGTERM"
	}
	return res
}

// errText is an error's message without the exit-code wrapping.
func errText(err error) string {
	var ee *exitError
	if errors.As(err, &ee) && ee.msg != "" {
		return ee.msg
	}
	return err.Error()
}

// emulationSkipped is why a step the run needs was skipped by the check:
// the Metal source not compiled on the emulation (Apple's builtins,
// swizzles), or the Python reference not run (no Python, no NumPy: the
// outputs would have nothing to be compared with); "" when none was. No
// g++ is said by the emulator's open.
func emulationSkipped(unchecked []string) string {
	for _, u := range unchecked {
		switch {
		case strings.HasPrefix(u, "not compiled") && !strings.Contains(u, "NVRTC") && !strings.Contains(u, "g++"):
			return u + " (see the note above)"
		case strings.HasPrefix(u, "reference not run (no "):
			return u + ": the outputs would have nothing to be compared with; install Python 3 with NumPy, or set " + pyref.PythonEnv + " to an interpreter that has it"
		}
	}
	return ""
}

// tooBigToEmulate says why spec is more than the emulation should run
// (how: how it runs a GPU thread):
// too many threads launched or too many buffer elements; "" otherwise
// (and when the spec does not plan: the run says why).
func tooBigToEmulate(m lint.Result, spec profiler.Spec, dev profiler.DeviceInfo, how string) string {
	plan, err := m.Family.Plan(spec, dev)
	if err != nil {
		return ""
	}
	var threads, elems int64
	for _, d := range slices.Concat(plan.Setup, plan.Dispatches) {
		threads += int64(d.Grid[0]) * int64(d.Grid[1]) * int64(d.Grid[2]) * int64(d.Threads())
	}
	for _, b := range plan.Buffers {
		elems += b.Elems
	}
	what := ""
	switch {
	case threads > maxEmulatedThreads:
		what = fmt.Sprintf("%s launches %d threads, more than the %d the emulation runs (%s)", spec, threads, maxEmulatedThreads, how)
	case elems > maxEmulatedElems:
		what = fmt.Sprintf("%s has %d buffer elements, more than the %d the emulation runs", spec, elems, maxEmulatedElems)
	default:
		return ""
	}
	return what + ": pick a smaller shape with --set (" + dimsNow(spec) + ")"
}

// dimsNow is "rows=4096,cols=4096", the spec's dims as --set takes them.
func dimsNow(spec profiler.Spec) string {
	var parts []string
	f, err := profiler.Lookup(spec.Kernel)
	if err != nil {
		return ""
	}
	for _, d := range f.Schema().Dims {
		parts = append(parts, fmt.Sprintf("%s=%d", d.Name, spec.Dims[d.Name]))
	}
	if len(parts) == 0 {
		return "its knobs decide the shape"
	}
	return "now " + strings.Join(parts, ",")
}

// worstParts reads |Δ| and the bound out of a verdict's worst element.
var worstParts = regexp.MustCompile(`\|Δ\|=(\S+) [≤>] bound (\S+)`)

// writeRunVerdict prints a run's outcome under the manifest's report (no
// timing: an emulated time is not a kernel's) and returns its exit code:
// 0 ok or unchecked, 1 a wrong result (mismatch, crash), 2 a spec or
// source that did not run.
func writeRunVerdict(w io.Writer, ran string, spec profiler.Spec, res profiler.Result) int {
	fmt.Fprintf(w, "  => %s (%s): ", ran, spec)
	v := res.Verdict
	switch res.Status {
	case profiler.StatusOK:
		if v == nil {
			fmt.Fprintln(w, "ok")
			return 0
		}
		detail := "worst err/bound " + sink.ErrBound(v)
		if p := worstParts.FindStringSubmatch(v.Worst); p != nil {
			detail = fmt.Sprintf("worst err %s of bound %s", p[1], p[2])
		}
		fmt.Fprintf(w, "ok (%s; %s checked in %s)\n", detail, profiler.Plural(v.Checked, "element", "elements"), v.Rows)
		if knobs := tunableKnobs(spec); len(knobs) > 0 {
			fmt.Fprintf(w, "     only %s ran: each value you ship needs its run (--set %s=…)\n", strings.Join(knobs, ","), strings.SplitN(knobs[0], "=", 2)[0])
		}
		return 0
	case profiler.StatusUnchecked:
		fmt.Fprintf(w, "unchecked: it ran, and nothing compares its outputs (the manifest's check)\n")
		return 0
	case profiler.StatusMismatch:
		fmt.Fprintf(w, "mismatch: %s\n", res.Error)
		if v != nil && v.Hint != "" {
			fmt.Fprintf(w, "     hint: %s\n", v.Hint)
		}
		return exitFailed
	case profiler.StatusInvalid, profiler.StatusCompileError:
		fmt.Fprintf(w, "%s: %s\n", res.Status, indentMore(res.Reason()))
		return exitBadInput
	}
	fmt.Fprintf(w, "%s: %s\n", res.Status, indentMore(res.Error))
	return exitFailed
}

// tunableKnobs are "WG=256", the spec's knobs that have other values (a
// reduction right at 8 warps can be wrong at 32): a check run ran one.
func tunableKnobs(spec profiler.Spec) []string {
	f, err := profiler.Lookup(spec.Kernel)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range f.Schema().Knobs {
		if len(k.Values) > 1 || len(k.Values) == 0 && k.Max > k.Min {
			out = append(out, fmt.Sprintf("%s=%d", k.Name, spec.Knobs[k.Name]))
		}
	}
	return out
}

// indentMore indents a message's continuation lines under its first.
func indentMore(msg string) string {
	return strings.ReplaceAll(strings.TrimRight(msg, "\n"), "\n", "\n     ")
}

// installFamily registers m's family so that the Runner (and parseSpec)
// find it by name.
func installFamily(m lint.Result) error {
	if err := user.Install(m.Family); err != nil {
		return badInput("%v", err)
	}
	return nil
}
