package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

const (
	calibrateSummary = "measure copy bandwidth and FLOP/s per dtype"
	calibrateHelp    = `  mltop calibrate [--backend B]         measure copy bandwidth and FLOP/s per dtype with built-in
                                        micro-kernels; cached per device, Results then give % of
                                        both the datasheet and the measured peak
`
)

// backendArgs are the flags of calibrate and selftest: --backend alone.
type backendArgs struct{ backend string }

func (a *backendArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.StringVar(&a.backend, "backend", "auto", "")
}

// runCalibrate is `mltop calibrate`: measure the device's copy bandwidth and
// FLOP/s per dtype with the backend's micro-kernels, cache them per device,
// and print them next to the datasheet peaks.
func runCalibrate(_ context.Context, s *session, a *backendArgs, pos []string) error {
	stdout, backend := s.stdout, &a.backend
	if err := noArgs("calibrate", pos); err != nil {
		return err
	}
	r, err := openRunner(*backend, io.Discard, false) // calibrated once, below
	if err != nil {
		return err
	}
	defer r.Close()
	c, err := r.Calibrate(true)
	if err != nil {
		return &exitError{code: exitFailed, msg: fmt.Sprintf("calibration failed: %v", err)}
	}
	dev := r.Device()
	path, _ := run.CalibrationPath(dev)
	fmt.Fprintf(stdout, "%s (%s)\n", dev.Name, dev.Backend)
	fmt.Fprintf(stdout, "  copy bandwidth  %8.1f GB/s measured  %s\n", c.CopyBandwidth/1e9, ofPeak(c.CopyBandwidth, dev.PeakBandwidth))
	var dts []profiler.DType
	for d := range c.FLOPS {
		dts = append(dts, d)
	}
	slices.Sort(dts)
	for _, d := range dts {
		fmt.Fprintf(stdout, "  %-5s           %8.2f TFLOP/s measured  %s\n", d, c.FLOPS[d]/1e12, ofPeak(c.FLOPS[d], dev.PeakFLOPS[d]))
	}
	for _, l := range c.Details {
		fmt.Fprintf(stdout, "  · %s\n", l)
	}
	fmt.Fprintf(stdout, "cached in %s; Results now give %% of these measured ceilings too\n", path)
	return nil
}

func ofPeak(measured, peak float64) string {
	if peak <= 0 {
		return "(no datasheet peak known)"
	}
	return fmt.Sprintf("(%.0f%% of the datasheet peak)", 100*measured/peak)
}
