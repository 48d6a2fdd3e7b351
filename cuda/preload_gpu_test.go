//go:build linux

package cuda

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// A program loaded ahead on the loader thread runs on the CUDA thread and
// computes what the same program loaded there computes; one not compiled
// yet is not compiled by Preload.
func TestPreloadOnLoaderThread(t *testing.T) {
	t.Setenv("MLTOP_CUDA_CACHE", t.TempDir()) // an empty cache, whatever the caller's holds
	b := openOrSkip(t)
	s := profiler.Spec{Kernel: "softmax_bwd", DType: profiler.F32, Knobs: map[string]int{"WG": 128}, Dims: map[string]int{"rows": 300, "cols": 4096}}
	prep, err := run.Prepare(s, b.Info(), run.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan := prep.Plan
	prog := plan.Dispatches[0].Program
	if _, err := b.Preload(prog); err == nil || !strings.Contains(err.Error(), "not in the compile cache") {
		t.Fatalf("Preload before any compile: %v, want a not-in-the-cache error", err)
	}
	b.Precompile(prog)
	ahead, err := b.Preload(prog)
	if err != nil {
		t.Fatal(err)
	}
	inTurn, err := b.Compile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if ahead.Attrs() != inTurn.Attrs() {
		t.Errorf("attributes loaded ahead %+v, in turn %+v", ahead.Attrs(), inTurn.Attrs())
	}
	outputs := func(k profiler.Kernel) map[string][]byte {
		bufs := map[string]profiler.Buffer{}
		defer func() {
			for _, x := range bufs {
				b.Free(x)
			}
		}()
		for _, bs := range plan.Buffers {
			x, err := b.Alloc(bs.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			bufs[bs.Name] = x
			raw := make([]byte, bs.Bytes())
			if bs.Init.Generated() {
				bs.Type.Encode(raw, profiler.Fill(bs, 7))
			}
			if err := b.Upload(x, raw); err != nil {
				t.Fatal(err)
			}
		}
		var ls []profiler.Launch
		for i := range plan.Dispatches {
			d := &plan.Dispatches[i]
			l := profiler.Launch{Dispatch: d, Kernel: k}
			for _, name := range d.Args {
				l.Args = append(l.Args, bufs[name])
			}
			ls = append(ls, l)
		}
		if err := b.Run(ls); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, bs := range plan.Buffers {
			if bs.Role.Checked() {
				out[bs.Name] = make([]byte, bs.Bytes())
				if err := b.Download(bufs[bs.Name], out[bs.Name]); err != nil {
					t.Fatal(err)
				}
			}
		}
		return out
	}
	got, want := outputs(ahead), outputs(inTurn)
	if len(want) == 0 {
		t.Fatal("the plan writes no buffer")
	}
	for name := range want {
		if !bytes.Equal(got[name], want[name]) {
			t.Errorf("%s: the kernel loaded ahead computed other bytes than the one loaded in turn", name)
		}
	}
}
