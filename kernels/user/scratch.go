package user

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// A buffer with `scratch: true` is working memory the host resets before
// every launch, as real launchers do: a block counter that must be 0 when
// the kernel starts (the last block to arrive finishes the reduction),
// per-block partial sums, a split-K GEMM's workspace and semaphores. It is
// initialised from init (zeros unless given), restored to those values
// before every rep (warm-up and timed, outside the timed region, as inout
// buffers are), never compared, never sent to the reference (ref.py does
// not see it and must not return it), and not counted in the default
// bytes model (it is counted in the memory a run needs).

// scratchInit is a scratch buffer's init when the manifest gives none: a
// counter or an accumulator starts at zero.
const scratchInit = "zeros"

// scratchBuffer checks a `scratch: true` buffer b (at YAML path) and
// returns it with its default init filled in. Keys that only mean
// something for a compared buffer are refused.
func (bl *builder) scratchBuffer(b bufferYAML, path string) (bufferYAML, error) {
	d, field := bl.d, "buffers["+b.Name+"]"
	refuse := func(key, msg string, args ...any) (bufferYAML, error) {
		return b, d.err(path+"."+key, field+"."+key, msg, args...)
	}
	switch {
	case b.Out:
		return refuse("out", "%s is scratch (reset before every launch, never compared) and out: keep one: drop `scratch: true` if the reference should check %s, else drop `out: true`", b.Name, b.Name)
	case b.InOut:
		return refuse("inout", "%s is scratch and inout: inout is compared with the reference after each launch, scratch never is; keep one (scratch for counters and partial sums)", b.Name)
	case b.Tol != nil:
		return refuse("tol", "%s is scratch, which is never compared: drop tol", b.Name)
	case b.Terms != nil:
		return refuse("terms", "%s is scratch, which is never compared: drop terms (it widens an output's tolerance)", b.Name)
	case b.Magnitude != "":
		return refuse("magnitude", "%s is scratch, which is never compared: drop magnitude", b.Name)
	case b.Accumulate != "":
		return refuse("accumulate", "%s is scratch, which is never compared: drop accumulate", b.Name)
	}
	if b.Init == "" {
		b.Init = scratchInit
	}
	return b, nil
}

// defaultBytes is the bytes model of a manifest without work.bytes: every
// buffer once, scratch buffers left out (a block counter or partials are
// a small share of the traffic, and counting a large workspace would
// flatter the kernel), and the note that says so.
func defaultBytes(bufs []profiler.BufferSpec) (float64, string) {
	var total float64
	var scratch []string
	for _, b := range bufs {
		if b.Role == profiler.ScratchReset {
			scratch = append(scratch, b.Name)
			continue
		}
		if b.Symbol != "" { // a module global is read through the constant cache (symbolsNotCounted)
			continue
		}
		total += float64(b.Bytes())
	}
	note := "bytes: no work.bytes in the manifest, so every buffer counted once"
	if len(scratch) > 0 {
		note += fmt.Sprintf(" (scratch %s not counted)", strings.Join(scratch, ", "))
	}
	return total, note
}
