package profiler

// EmulationOptions makes the Runner measure once and at once, for the
// backends that run a kernel on a CPU emulation of its GPU language
// (metal/mslemu, cuda/cudaemu): timing is not what they are for.
func EmulationOptions() Options {
	opt := DefaultOptions()
	opt.Stop = StopRule{Noise: 1, MinSamples: 1, MinTime: 1e-9, MaxTime: 1e-3}
	opt.Warmup = 1e-9
	return opt
}

// EmulatedTiming is Backend.Time for an emulation: it runs the launches
// reps times with run, as a GPU backend does, so that the buffers hold
// what a GPU's timed reps leave (an inout buffer restored before the last
// rep holds one launch's result, for the check after timing). A constant
// sample ends measuring at once, and no cache is prepared (dirty is
// reported as a flush).
func EmulatedTiming(ls []Launch, reps int, mode CacheMode, run func([]Launch) error) (Timing, error) {
	t := Timing{Timer: "emulated"}
	if mode == CacheDirty {
		t.Cache = CacheFlush
	}
	for range reps {
		if err := run(ls); err != nil {
			return Timing{}, err
		}
		s := make([]float64, len(ls))
		for i := range s {
			s[i] = 1e6
		}
		t.Samples = append(t.Samples, s)
	}
	return t, nil
}

// HostBuffer is a Buffer in host memory: the buffers of the emulations,
// whose kernels read and write them on the CPU.
type HostBuffer struct{ B []byte }

func (b *HostBuffer) Size() int64 { return int64(len(b.B)) }

// HostMemory is Alloc, Free, Upload and Download over HostBuffers, for a
// backend to embed.
type HostMemory struct{}

func (HostMemory) Alloc(n int64) (Buffer, error) { return &HostBuffer{make([]byte, n)}, nil }
func (HostMemory) Free(Buffer)                   {}
func (HostMemory) Upload(b Buffer, src []byte) error {
	copy(b.(*HostBuffer).B, src)
	return nil
}
func (HostMemory) Download(b Buffer, dst []byte) error {
	copy(dst, b.(*HostBuffer).B)
	return nil
}
