package metal_test

import (
	"encoding/binary"
	"testing"

	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/metal/mslemu"
	"github.com/mltop/mltop/profiler"
)

// The cold flush kernel, run on the MSL emulation: it writes nothing over
// the buffers it meets in use (zeros; 0x01 bytes after a dirty fill), and
// it folds every element it should read into its XOR: one marked element
// anywhere (in the four-load loop or the tail) makes exactly the thread
// that read it store its fold, at word [its group].
func TestFlushKernelOnEmulator(t *testing.T) {
	eb := mslemu.New(t, "testdata/mslemu", metal.TestDev)
	k, err := eb.Compile(metal.FlushProgram)
	if err != nil {
		t.Fatal(err)
	}
	const groups = 2
	stride := groups * metal.FlushThreads
	n := 4*stride*2 + 37 // two passes of the four-load loop, then a tail
	buf, _ := eb.Alloc(int64(16 * n))
	run := func(d *profiler.Dispatch) []byte {
		t.Helper()
		if err := eb.Run([]profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf}}}); err != nil {
			t.Fatal(err)
		}
		return download(t, eb, buf)
	}
	d := metal.FlushDispatch(int64(16*n), groups)
	for _, fill := range []byte{0, 1} {
		in := make([]byte, 16*n)
		for i := range in {
			in[i] = fill
		}
		_ = eb.Upload(buf, in)
		out := run(d)
		for i := range out {
			if out[i] != fill {
				t.Fatalf("buffer of 0x%02x bytes: the flush wrote byte %d (0x%02x): it must only read", fill, i, out[i])
			}
		}
	}
	for _, j := range []int{0, 1, stride - 1, stride, 3*stride + 5, 4*stride + 7, 8 * stride, n - 1} {
		const mark = 0xdead0001
		in := make([]byte, 16*n)
		binary.LittleEndian.PutUint32(in[16*j+8:], mark) // element j's third word
		_ = eb.Upload(buf, in)
		dm := *d
		m := uint32(mark)
		dm.Scalars = []profiler.Scalar{profiler.I32Param("n", n), profiler.I32Param("never", int(int32(m)))}
		out := run(&dm)
		g := (j % stride) / metal.FlushThreads
		if got := binary.LittleEndian.Uint32(out[4*g:]); got != mark {
			t.Errorf("element %d (read by group %d): word %d = %#x, want the fold %#x: the element was not read or not folded", j, g, g, got, mark)
		}
		// nothing else written (the mark itself excepted)
		for w := 0; w < 4*n; w++ {
			if w == g || w == 4*j+2 {
				continue
			}
			if v := binary.LittleEndian.Uint32(out[4*w:]); v != 0 {
				t.Errorf("element %d: word %d = %#x, want 0", j, w, v)
				break
			}
		}
	}
}
