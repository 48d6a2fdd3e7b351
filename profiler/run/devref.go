package run

import (
	"fmt"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// onDevice is the profiler.RunOnDevice a DeviceReference family gets: it
// plans, compiles and runs another spec on this runner's backend, with its
// own buffers (the current spec's and the input cache are not touched).
func (r *Runner) onDevice(dev profiler.DeviceInfo, seed uint64) profiler.RunOnDevice {
	return func(f profiler.Family, s profiler.Spec, in profiler.Inputs) (map[string][]float64, error) {
		prep, err := PrepareFamily(f, s, dev, PrepareOptions{Cache: r.plans})
		if err != nil {
			return nil, err
		}
		full, plan := prep.Spec, prep.Plan
		launches, setup, err := r.compile(plan, &profiler.Result{}) // its load times and notes are not the spec's
		if err != nil {
			return nil, err
		}
		bufs := map[string]profiler.Buffer{}
		scratch := map[string][]byte{} // scratch_reset buffers' initial bytes, uploaded again after the setup
		defer func() {
			for _, b := range bufs {
				r.backend.Free(b)
			}
		}()
		for _, b := range plan.Buffers {
			buf, err := r.backend.Alloc(b.Bytes())
			if err != nil {
				return nil, fmt.Errorf("allocating %s (%s): %w", b.Name, units.Bytes(b.Bytes()), err)
			}
			bufs[b.Name] = buf
			raw := make([]byte, b.Bytes())
			vals, given := in[b.Name]
			switch {
			case given && b.Role.Reads():
				if int64(len(vals)) != b.Elems {
					return nil, fmt.Errorf("input %s: %d values given, %s's buffer holds %d: the shapes differ", b.Name, len(vals), full.Kernel, b.Elems)
				}
				profiler.EncodeBuffer(b, raw, vals) // slots of this plan's buffer (the caller recodes, profiler.Recode)
			case b.Init == profiler.InitPoison:
				for i := range raw {
					raw[i] = 0xff
				}
			case b.Init.Generated():
				profiler.EncodeBuffer(b, raw, profiler.Fill(b, seed))
			}
			if err := r.backend.Upload(buf, raw); err != nil {
				return nil, fmt.Errorf("uploading %s: %w", b.Name, err)
			}
			if b.Role == profiler.ScratchReset {
				scratch[b.Name] = raw
			}
		}
		bind(launches, plan, bufs)
		bind(setup, plan, bufs)
		if err := r.writeSymbols(plan, bufs, setup, launches); err != nil {
			return nil, err
		}
		if len(setup) > 0 {
			if err := r.backend.Run(setup); err != nil {
				return nil, fmt.Errorf("setup dispatch: %w", err)
			}
			for name, raw := range scratch {
				if err := r.backend.Upload(bufs[name], raw); err != nil {
					return nil, fmt.Errorf("resetting scratch %s after the setup: %w", name, err)
				}
			}
		}
		if err := r.backend.Run(launches); err != nil {
			return nil, fmt.Errorf("run: %w", err)
		}
		out := map[string][]float64{}
		for _, b := range plan.Buffers {
			if !b.Role.Checked() {
				continue
			}
			raw := make([]byte, b.Bytes())
			if err := r.backend.Download(bufs[b.Name], raw); err != nil {
				return nil, fmt.Errorf("downloading %s: %w", b.Name, err)
			}
			vals := make([]float64, b.Elems) // float64: an f64 output keeps its low bits
			b.Type.DecodeF64(raw, vals)
			out[b.Name] = vals
		}
		return out, nil
	}
}
