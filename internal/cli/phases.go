package cli

import (
	"fmt"
	"io"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// phaseSink prints where each spec's wall time went (--phases) and, on
// Close, the sum over the sweep.
type phaseSink struct {
	w     io.Writer
	sum   profiler.Phases
	specs int
}

func (p *phaseSink) Write(r profiler.Result) error {
	if r.Phases == nil {
		return nil
	}
	p.sum.Add(*r.Phases)
	p.specs++
	traceStep(fmt.Sprintf("result from device %d after %.1f ms: %s", r.DeviceOrdinal, 1e3*r.Phases.Total(), r.Spec.String()))
	_, err := fmt.Fprintf(p.w, "mltop: phases %s: %.1f ms: %s\n", r.Spec.String(), 1e3*r.Phases.Total(), r.Phases)
	return err
}

// Close prints the sum; a second Close prints nothing.
func (p *phaseSink) Close() error {
	if p.specs == 0 {
		return nil
	}
	tot := p.sum.Total()
	_, err := fmt.Fprintf(p.w, "mltop: phases over %d specs: %.2f s (%.1f ms per spec): %s\n", p.specs, tot, 1e3*tot/float64(p.specs), p.sum)
	p.specs = 0
	return err
}

// devices prints where each device's time went in a multi-device sweep,
// and on one device the share of the sweep its GPU was busy measuring.
func (p *phaseSink) devices(sum run.Summary) {
	for _, l := range sum.DeviceLines() {
		fmt.Fprintf(p.w, "mltop: phases %s\n", l)
	}
}
