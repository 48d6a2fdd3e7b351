//go:build linux

package cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// TestReproExperiment is a measurement, not a check: what moves a spec's
// median between two sweeps of the same file (docs/measuring.md,
// Reproducibility). It runs only with MLTOP_EXPERIMENT=repro on a GPU and
// prints, per config, the spread of medians of:
//
//	same    one Runner, the spec again and again (its buffers reused)
//	fresh   a new Runner each time, behind a pad allocation of random size
//	        (the spec's buffers at other device addresses)
//	bufonly as fresh, but every Runner gets the module loaded first (only
//	        the buffers move)
//	windows one 2-second measurement cut into windows of as many samples
//	paused  as same, 0.5 s idle before each
func TestReproExperiment(t *testing.T) {
	if os.Getenv("MLTOP_EXPERIMENT") != "repro" {
		t.Skip("a measurement: MLTOP_EXPERIMENT=repro runs it")
	}
	b := openOrSkip(t)
	dims := map[string]int{"B": 1, "H": 32, "Hkv": 32, "Lq": 2048, "Lk": 2048, "D": 128}
	configs := []map[string]int{
		{"BK": 16, "BQ": 128, "WM": 1, "WN": 2},
		{"BK": 64, "BQ": 32, "WM": 2, "WN": 2},
		{"BK": 32, "BQ": 128, "WM": 1, "WN": 1},
		{"BK": 64, "BQ": 128, "WM": 4, "WN": 1},
	}
	// MLTOP_REPRO_CONFIGS (a JSON list of knob maps) and MLTOP_REPRO_REPS
	// replace the configs and the 8 repetitions.
	if js := os.Getenv("MLTOP_REPRO_CONFIGS"); js != "" {
		configs = nil
		if err := json.Unmarshal([]byte(js), &configs); err != nil {
			t.Fatalf("MLTOP_REPRO_CONFIGS: %v", err)
		}
	}
	reps := 8
	if n, err := strconv.Atoi(os.Getenv("MLTOP_REPRO_REPS")); err == nil && n > 1 {
		reps = n
	}
	opts := profiler.DefaultOptions()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, knobs := range configs {
		s := profiler.Spec{Kernel: "attn_fwd", DType: profiler.BF16, Knobs: knobs, Dims: dims, Flags: map[string]bool{"causal": false}}
		median := func(r *run.Runner, o profiler.Options) (float64, []float64) {
			res := r.Run(context.Background(), s, o, nil)
			if res.Status != profiler.StatusOK {
				t.Fatalf("%s: %s %s", s, res.Status, res.Error)
			}
			return res.Stats.Median / 1e3, res.Samples
		}
		line := func(name string, xs []float64, extra string) {
			lo, hi := slices.Min(xs), slices.Max(xs)
			ys := slices.Clone(xs)
			slices.Sort(ys)
			mid := ys[len(ys)/2]
			parts := make([]string, len(xs))
			for i, x := range xs {
				parts[i] = fmt.Sprintf("%.1f", x)
			}
			t.Logf("%-8s spread %5.2f%%  [%s]%s", name, 100*(hi-lo)/mid, strings.Join(parts, " "), extra)
		}
		t.Logf("== %v", knobs)
		same := run.NewRunner(b)
		var xs []float64
		for range reps {
			m, _ := median(same, opts)
			xs = append(xs, m)
		}
		line("same", xs, "")
		xs = xs[:0]
		var pads []string
		for range reps {
			padBytes := int64(rng.IntN(4096)+1) << 20
			pad, err := b.Alloc(padBytes)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := median(run.NewRunner(b), opts)
			b.Free(pad)
			xs = append(xs, m)
			pads = append(pads, fmt.Sprint(padBytes>>20))
		}
		line("fresh", xs, "  pads MiB "+strings.Join(pads, " "))
		// bufonly: as fresh, but every runner gets the first module
		// loaded: what moves is only where the buffers lie.
		xs, pads = xs[:0], pads[:0]
		keep := &sameModules{Backend: b, loaded: map[string]profiler.Kernel{}}
		for range reps {
			padBytes := int64(rng.IntN(4096)+1) << 20
			pad, err := b.Alloc(padBytes)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := median(run.NewRunner(keep), opts)
			b.Free(pad)
			xs = append(xs, m)
			pads = append(pads, fmt.Sprint(padBytes>>20))
		}
		line("bufonly", xs, "  pads MiB "+strings.Join(pads, " "))
		xs = xs[:0]
		for range reps {
			time.Sleep(500 * time.Millisecond)
			m, _ := median(same, opts)
			xs = append(xs, m)
		}
		line("paused", xs, "")
		long := opts
		long.Stop = profiler.StopRule{Noise: 1e-9, MinSamples: 10, MinTime: 2, MaxTime: 2, MaxSamples: 100000}
		_, samples := median(same, long)
		w := len(samples) / reps
		xs = xs[:0]
		for i := range reps {
			win := slices.Clone(samples[i*w : (i+1)*w])
			slices.Sort(win)
			xs = append(xs, win[len(win)/2]/1e3)
		}
		line("windows", xs, fmt.Sprintf("  (%d samples each)", w))
	}
}

// sameModules hands every runner the module loaded first for a program,
// where the backend would load it anew (TestReproExperiment's bufonly).
type sameModules struct {
	profiler.Backend
	loaded map[string]profiler.Kernel
}

func (m *sameModules) Compile(p profiler.Program) (profiler.Kernel, error) {
	key := p.Source + "|" + p.Entry + "|" + fmt.Sprint(p.Macros)
	if k, ok := m.loaded[key]; ok {
		return k, nil
	}
	k, err := m.Backend.Compile(p)
	if err == nil {
		m.loaded[key] = k
	}
	return k, err
}
