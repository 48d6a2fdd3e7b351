package profiler

import "fmt"

// SymbolWriter is a Backend whose programs have module globals that host
// code fills (CUDA `__constant__` and `__device__` variables, which a
// whole program fills with cudaMemcpyToSymbol). A plan's buffer with
// BufferSpec.Symbol set is one: the runner writes its values into the
// global of every kernel module of the spec, once per spec, before the
// setup dispatches.
type SymbolWriter interface {
	// WriteSymbol copies src's bytes into the global named symbol (its C++
	// name: c_Kernel, ns::c_Kernel) of kernel k's module. A global the
	// module lacks, or one whose size is not src's, is a *SymbolError.
	WriteSymbol(k Kernel, symbol string, src Buffer) error
}

// SymbolError says that a module global a buffer names cannot take the
// buffer's values: the spec is invalid (bad input), not a kernel fault.
type SymbolError struct {
	Buffer string // the buffer's name
	Symbol string // the global's C++ name
	Msg    string // what is wrong and what to do
}

func (e *SymbolError) Error() string {
	if e.Buffer == e.Symbol || e.Buffer == "" {
		return fmt.Sprintf("symbol %s: %s", e.Symbol, e.Msg)
	}
	return fmt.Sprintf("buffer %s (symbol %s): %s", e.Buffer, e.Symbol, e.Msg)
}

// SymbolBuffers are the plan's buffers that fill module globals (Symbol
// set): they are allocated and filled like inputs, but no dispatch binds
// them as an argument.
func (p *Plan) SymbolBuffers() []BufferSpec {
	var out []BufferSpec
	for _, b := range p.Buffers {
		if b.Symbol != "" {
			out = append(out, b)
		}
	}
	return out
}
