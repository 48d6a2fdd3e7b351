package all_test

import (
	"slices"
	"testing"

	"github.com/mltop/mltop/kernels/kit/kittest"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// Every family's Metal kernels, compiled with g++ against the CPU
// emulation of MSL in metal/testdata/mslemu and run through the real
// Runner against the float64 references, on each of the family's
// examples; the registry's first bf16 example also through Metal 3.1's
// native bfloat branch of mltop_common.h. It proves the indexing, masks,
// reductions, barriers, atomics, buffer order, scalar layout and macros;
// it cannot prove that the Metal compiler accepts the text or the
// hardware's fragment layout. Families run in parallel (g++ dominates).
func TestMetalKernelsOnCPUEmulator(t *testing.T) {
	all := examples(t)
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	nativeFam := ""
	for _, n := range names {
		if nativeFam == "" && slices.ContainsFunc(all[n], func(s profiler.Spec) bool { return s.DType == profiler.BF16 }) {
			nativeFam = n
		}
	}
	for _, fam := range names {
		specs := all[fam]
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			eb := mslemu.New(t, "../../metal/testdata/mslemu", kittest.Named(kittest.M3Max, "Apple M2 (emulated)"))
			opt := mslemu.Options()
			opt.Cache = profiler.CacheHot
			opt.MaxRows = 4096
			if testing.Short() {
				specs = specs[:1]
			}
			native := fam != nativeFam || testing.Short()
			for _, s := range specs {
				runs := []bool{false}
				if s.DType == profiler.BF16 && !native {
					runs, native = []bool{false, true}, true
				}
				for _, nat := range runs {
					name := s.String()
					if nat {
						name += "/native-bfloat"
					}
					t.Run(name, func(t *testing.T) {
						eb.NativeBF16 = nat
						// A runner per case: its kernel cache does not know about NativeBF16.
						mslemu.Check(t, run.NewRunner(eb), s, opt)
					})
				}
			}
		})
	}
}
