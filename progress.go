package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
	"github.com/mltop/mltop/profiler/sink"
)

// progressBar draws one self-overwriting line on stderr when it is a
// terminal; otherwise it prints nothing (logs stay clean).
type progressBar struct {
	w     io.Writer
	on    bool
	last  time.Time
	width int
	// devices is the per-device count of a multi-device sweep (--devices),
	// shown as text after the bar.
	devices []run.DeviceCount
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	on := false
	if f, ok := w.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progressBar{w: w, on: on, width: 100}
}

func (b *progressBar) draw(i, n int, s profiler.Spec, phase string) {
	if !b.on || time.Since(b.last) < 50*time.Millisecond {
		return
	}
	b.last = time.Now()
	bar := sink.Bar(float64(i), float64(n), 20)
	line := fmt.Sprintf("%s %d/%d %s  %s", bar, i+1, n, s.String(), phase)
	if len(b.devices) > 0 {
		line = fmt.Sprintf("%s %d/%d %s  %s", bar, i+1, n, deviceText(b.devices), s.String())
	}
	if r := []rune(line); len(r) > b.width {
		line = string(r[:b.width-1]) + "…"
	}
	fmt.Fprintf(b.w, "\r%-*s", b.width, line)
}

func (b *progressBar) hooks() run.Hooks {
	return run.Hooks{
		Start: func(i, n int, s profiler.Spec) {
			b.last = time.Time{}
			b.draw(i, n, s, "starting")
		},
		Progress: func(i, n int, s profiler.Spec, p profiler.Progress) {
			phase := p.Phase
			if p.Samples > 0 {
				phase = fmt.Sprintf("%s n=%d median %.2f µs cv %.2f%%", p.Phase, p.Samples, p.Median/1e3, 100*p.CV)
			}
			b.draw(i, n, s, phase)
		},
		Devices: func(c []run.DeviceCount) { b.devices = c },
	}
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

func (b *progressBar) finish() {
	if b.on {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
	}
}
