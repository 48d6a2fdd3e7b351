package run

import (
	"errors"
	"fmt"

	"github.com/mltop/mltop/profiler"
)

// writeSymbols copies the plan's symbol buffers (BufferSpec.Symbol) into
// the module globals they name, in the module of every kernel the spec
// launches: each kernel of a user program is its own module, with its own
// copy of the globals. It runs once per spec, after the buffers are filled
// and before the setup dispatches: the timed reps do not restore a global
// that a kernel writes.
func (r *Runner) writeSymbols(plan *profiler.Plan, bufs map[string]profiler.Buffer, launches ...[]profiler.Launch) error {
	syms := plan.SymbolBuffers()
	if len(syms) == 0 {
		return nil
	}
	w, ok := r.backend.(profiler.SymbolWriter)
	if !ok {
		b := syms[0]
		return &profiler.SymbolError{Buffer: b.Name, Symbol: b.Symbol,
			Msg: fmt.Sprintf("the %s backend has no module globals to fill: run it on CUDA, or pass the table as a kernel argument", r.dev.Backend)}
	}
	seen := map[profiler.Kernel]bool{}
	for _, ls := range launches {
		for _, l := range ls {
			if l.Kernel == nil || seen[l.Kernel] {
				continue
			}
			seen[l.Kernel] = true
			for _, b := range syms {
				if err := w.WriteSymbol(l.Kernel, b.Symbol, bufs[b.Name]); err != nil {
					var se *profiler.SymbolError
					if errors.As(err, &se) && se.Buffer == "" {
						se.Buffer = b.Name
					}
					return fmt.Errorf("dispatch %s: %w", l.Dispatch.Name, err)
				}
			}
		}
	}
	return nil
}

// symbolStatus is the status of a spec whose symbols could not be
// written: invalid for a global the program lacks or sizes otherwise (the
// manifest is wrong), an error for anything else.
func symbolStatus(err error) profiler.Status {
	var se *profiler.SymbolError
	if errors.As(err, &se) {
		return profiler.StatusInvalid
	}
	return profiler.StatusError
}
