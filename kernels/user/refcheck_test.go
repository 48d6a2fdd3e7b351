package user

import (
	"context"
	"os"
	"testing"

	"github.com/mltop/mltop/kernels/user/pyref"
	"github.com/mltop/mltop/profiler"
)

// mltop check's reference step counts inout buffers among the outputs a
// reference returns: the AdamW example returns params, m and v and gets
// no "not an output buffer" warning.
func TestCheckReferenceCountsInOut(t *testing.T) {
	usePython(t)
	f, err := Load("../../examples/adamw_inplace/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := f.TinySpec(profiler.F32)
	if err != nil {
		t.Fatal(err)
	}
	got, problems, err := f.CheckReference(context.Background(), os.Getenv(pyref.PythonEnv), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Errorf("returned %v, want params, m and v", got)
	}
	for _, p := range problems {
		t.Errorf("problem: %s", p.Msg)
	}
}
