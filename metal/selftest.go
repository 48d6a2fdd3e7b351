package metal

import (
	"fmt"
	"sort"
	"strings"
)

// SelfTestReport is what `mltop selftest` prints about Metal timing, for a
// Mac user to paste into a bug report.
type SelfTestReport struct {
	Device string
	Arch   string
	Timer  string // the timer the backend ends up on
	Lines  []SelfTestLine
	OK     bool
}

// SelfTestLine is one finding; OK is false for a problem.
type SelfTestLine struct {
	OK   bool
	Text string
}

func (r *SelfTestReport) addf(ok bool, format string, a ...any) {
	r.Lines = append(r.Lines, SelfTestLine{OK: ok, Text: fmt.Sprintf(format, a...)})
}

// String formats the report.
func (r SelfTestReport) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.OK {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "metal timestamps: %s on %s (%s), timer %s\n", verdict, r.Device, r.Arch, r.Timer)
	for _, l := range r.Lines {
		mark := "ok  "
		if !l.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, l.Text)
	}
	return b.String()
}

// selfTestSource is a kernel that keeps the GPU busy for a few
// milliseconds: each thread runs a dependent FMA chain of ITERS steps and
// stores the result so the compiler cannot drop it.
const selfTestSource = `#include <metal_stdlib>
using namespace metal;
kernel void mltop_spin(device float* out [[buffer(0)]],
                       constant uint& n [[buffer(1)]],
                       uint gid [[thread_position_in_grid]]) {
  if (gid >= n) return;
  float x = float(gid) * 1e-6f;
  for (int i = 0; i < ITERS; i++) { x = fma(x, 0.999f, 1e-3f); }
  out[gid] = x;
}
`

// medianOf returns the median of xs (0 for none).
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// AgreeTimers checks the counter and command-buffer medians of the same
// kernel: a command buffer adds launch overhead of tens of microseconds,
// so the counter may read lower, but not by more than half, and never
// meaningfully higher.
func AgreeTimers(counterNS, cmdbufNS float64) error {
	switch {
	case counterNS <= 0 || cmdbufNS <= 0:
		return fmt.Errorf("a median is not positive (counters %.0f ns, cmdbuf %.0f ns)", counterNS, cmdbufNS)
	case counterNS > cmdbufNS*1.10+20e3:
		return fmt.Errorf("counter median %.3f ms exceeds the command-buffer median %.3f ms", counterNS/1e6, cmdbufNS/1e6)
	case counterNS < cmdbufNS*0.5:
		return fmt.Errorf("counter median %.3f ms is under half the command-buffer median %.3f ms", counterNS/1e6, cmdbufNS/1e6)
	}
	return nil
}
