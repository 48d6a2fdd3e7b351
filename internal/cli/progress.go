package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
)

// terminalWidth says whether w is a terminal and how wide; tests replace it.
var terminalWidth = func(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return 0, false
	}
	width, _, err := term.GetSize(f.Fd())
	if err != nil || width <= 0 {
		width = 80
	}
	return width, true
}

// progress draws a bar on stderr when it is a terminal (nothing otherwise:
// logs stay clean) and decides where the table rows go: when stdout is the
// same terminal, rows are printed above the bar, which redraws below them
// (github.com/vbauerster/mpb); otherwise straight to stdout.
type progress struct {
	rows  io.Writer // where table rows go
	width int       // stdout's terminal width; 0 when stdout is not a terminal

	p     *mpb.Progress // nil: no bar
	bar   *mpb.Bar
	mu    sync.Mutex
	label string
	done  bool
	// devices is the per-device count of a multi-device sweep (--devices),
	// shown before the spec.
	devices []run.DeviceCount
}

// newProgress starts a bar for total specs. Options (for tests) replace the
// container's output.
func newProgress(stdout, stderr io.Writer, quiet bool, total int, opts ...mpb.ContainerOption) *progress {
	pr := &progress{rows: stdout}
	outW, outTerm := terminalWidth(stdout)
	if outTerm {
		pr.width = outW
	}
	errW, errTerm := terminalWidth(stderr)
	if quiet || !errTerm {
		return pr
	}
	// Auto refresh always: rows written above the bar must come out even
	// if mpb's own terminal check disagrees with ours.
	opts = append([]mpb.ContainerOption{mpb.WithOutput(stderr), mpb.WithWidth(errW), mpb.WithAutoRefresh()}, opts...)
	pr.p = mpb.New(opts...)
	pr.bar = pr.p.New(int64(total), mpb.BarStyle().Lbound("[").Filler("#").Tip("#").Padding(".").Rbound("]"),
		mpb.BarWidth(20),
		mpb.PrependDecorators(decor.CountersNoUnit("%d/%d ", decor.WCSyncWidth)),
		mpb.AppendDecorators(decor.Any(func(s decor.Statistics) string {
			pr.mu.Lock()
			defer pr.mu.Unlock()
			room := s.AvailableWidth - 24 // leave the bar its 20 columns
			if room < 4 {
				return ""
			}
			return " " + sink.Clip(pr.label, room)
		})),
	)
	if outTerm {
		pr.rows = pr.p // rows above the bar, on the one terminal
	}
	return pr
}

func (pr *progress) set(s profiler.Spec, phase string) {
	pr.mu.Lock()
	pr.label = s.String() + "  " + phase
	if len(pr.devices) > 0 {
		pr.label = deviceText(pr.devices) + " " + pr.label
	}
	pr.mu.Unlock()
}

// deviceText is the per-device part of the progress line: specs done on
// each device, * on one running a spec, x on one dropped.
func deviceText(c []run.DeviceCount) string {
	parts := make([]string, len(c))
	for i, d := range c {
		mark := ""
		switch {
		case d.Dropped:
			mark = "x"
		case d.Busy:
			mark = "*"
		}
		parts[i] = fmt.Sprintf("gpu%d:%d%s", d.Ordinal, d.Done, mark)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// hooks feed the bar from the runner.
func (pr *progress) hooks() run.Hooks {
	if pr.p == nil {
		return run.Hooks{}
	}
	return run.Hooks{
		Start: func(i, n int, s profiler.Spec) { pr.set(s, "starting") },
		Progress: func(i, n int, s profiler.Spec, p profiler.Progress) {
			phase := p.Phase
			if p.Samples > 0 {
				phase = fmt.Sprintf("%s n=%d median %.2f µs cv %.2f%%", p.Phase, p.Samples, p.Median/1e3, 100*p.CV)
			}
			pr.set(s, phase)
		},
		Done: func(i, n int, r profiler.Result) {
			// n moves when a shard with --claims gives or takes specs.
			pr.bar.SetTotal(int64(n), false)
			pr.bar.Increment()
		},
		Devices: func(c []run.DeviceCount) {
			pr.mu.Lock()
			pr.devices = c
			pr.mu.Unlock()
		},
	}
}

// table is the result table for specs, fitted to stdout's terminal.
func (pr *progress) table(specs []profiler.Spec) *sink.Table {
	t := sink.NewTable(pr.rows)
	full := make([]profiler.Spec, len(specs))
	for i, s := range specs {
		full[i] = s
		if f, err := profiler.Lookup(s.Kernel); err == nil {
			full[i] = s.WithDefaults(f.Schema())
		}
	}
	if pr.width > 0 {
		t.Fit(pr.width, full)
	} else {
		t.Widen(full)
	}
	return t
}

// finish removes the bar; rows written before it stay. Safe to call twice.
func (pr *progress) finish() {
	if pr == nil || pr.p == nil || pr.done {
		return
	}
	pr.done = true
	pr.bar.Abort(true)
	pr.p.Wait()
}
