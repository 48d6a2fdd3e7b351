package sink

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// JSON writes one Result per line.
type JSON struct {
	enc *json.Encoder
	c   io.Closer
}

// NewJSON writes JSON lines to w.
func NewJSON(w io.Writer) *JSON {
	s := &JSON{enc: json.NewEncoder(w)}
	if c, ok := w.(io.Closer); ok && w != os.Stdout {
		s.c = c
	}
	return s
}

// Write encodes one line.
func (s *JSON) Write(r profiler.Result) error { return s.enc.Encode(r) }

// Close closes the writer when it owns it.
func (s *JSON) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

// Bench prints Go benchmark lines that benchstat reads: one line per
// chunk of samples (up to 10 chunks, like -count=10), with ns/op, TFLOP/s
// and GB/s.
type Bench struct {
	w      io.Writer
	header bool
}

// NewBench writes to w.
func NewBench(w io.Writer) *Bench { return &Bench{w: w} }

// BenchName is the benchmark name of a spec: Benchmark<Kernel>/dtype=…/K=V….
func BenchName(s profiler.Spec) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	b.WriteString(strings.ToUpper(s.Kernel[:1]) + s.Kernel[1:])
	b.WriteString("/dtype=" + string(s.DType))
	for _, m := range []map[string]int{s.Knobs, s.Dims} {
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(&b, "/%s=%d", k, m[k])
		}
	}
	for _, k := range sortedKeys(s.Flags) {
		if s.Flags[k] {
			b.WriteString("/" + k)
		}
	}
	return b.String()
}

// Write prints the lines of one result; failed specs print nothing (benchstat
// has no way to say "failed") but a comment line. Unchecked specs (a user
// kernel with `check: none`) were measured like ok ones: their lines are
// printed, after a comment that says the outputs were not verified.
func (s *Bench) Write(r profiler.Result) error {
	if !s.header {
		fmt.Fprintf(s.w, "goos: %s\ngoarch: %s\npkg: mltop/%s\ncpu: %s\n", runtime.GOOS, runtime.GOARCH, r.Backend, r.Device)
		s.header = true
	}
	measured := r.Status == profiler.StatusOK || r.Status == profiler.StatusUnchecked
	if !measured || len(r.Samples) == 0 {
		_, err := fmt.Fprintf(s.w, "# %s: %s %s\n", BenchName(r.Spec), r.Status, profiler.OneLine(r.Reason()))
		return err
	}
	if r.Status == profiler.StatusUnchecked {
		if _, err := fmt.Fprintf(s.w, "# %s: unchecked (outputs not verified)\n", BenchName(r.Spec)); err != nil {
			return err
		}
	}
	chunks := min(10, len(r.Samples))
	per := len(r.Samples) / chunks
	for c := 0; c < chunks; c++ {
		part := r.Samples[c*per : (c+1)*per]
		var sum float64
		for _, v := range part {
			sum += v
		}
		mean := sum / float64(len(part))
		line := fmt.Sprintf("%s\t%d\t%.1f ns/op", BenchName(r.Spec), len(part), mean)
		if r.FLOPs > 0 {
			line += fmt.Sprintf("\t%.4g TFLOP/s", r.FLOPs/mean/1e3)
		}
		if r.Bytes > 0 {
			line += fmt.Sprintf("\t%.4g GB/s", r.Bytes/mean)
		}
		if _, err := fmt.Fprintln(s.w, line); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing.
func (s *Bench) Close() error { return nil }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
