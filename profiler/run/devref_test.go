package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// vsScale is test_scale checked against test_scale itself run at f32 on
// the device (as a user kernel's `check: {kernel: …}` is): it plans as
// test_scale and implements profiler.DeviceReference.
type vsScale struct {
	enginetest.ScaleFamily
	other profiler.Spec // what it asks the device to run, beyond N
	shift float32       // added to the inputs it passes (0: the same inputs)
	saw   *profiler.Inputs
}

func (vsScale) Name() string { return "test_vs_scale" }

func (v vsScale) Reference(profiler.Spec, profiler.Inputs, int, uint64) (*profiler.Reference, error) {
	return nil, fmt.Errorf("the runner must call DeviceReference")
}

func (v vsScale) DeviceReference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64, runOn profiler.RunOnDevice) (*profiler.Reference, error) {
	o := v.other
	o.Kernel, o.DType = "test_scale", profiler.F32
	o.Dims = map[string]int{"N": s.Dims["N"]}
	f, _ := profiler.Lookup("test_scale")
	if v.shift != 0 {
		x := make([]float32, len(in["x"]))
		for i, a := range in["x"] {
			x[i] = a + v.shift
		}
		in = profiler.Inputs{"x": x}
	}
	outs, err := runOn(f, o, in)
	if err != nil {
		return nil, err
	}
	*v.saw = in
	got := outs["out"]
	rows := profiler.SampleRows(len(got), maxRows, seed)
	c := profiler.Check{Buffer: "out"}
	for _, r := range rows {
		c.Index = append(c.Index, r)
		c.Want = append(c.Want, got[r])
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(rows), RowsTotal: len(got), Rows: "device reference"}, nil
}

var vsOnce sync.Once

func TestDeviceReference(t *testing.T) {
	var saw profiler.Inputs
	cur := &vsScale{saw: &saw}
	vsOnce.Do(func() { profiler.Register(cur) })
	f, _ := profiler.Lookup("test_vs_scale")
	fam := f.(*vsScale)
	b := &enginetest.MemBackend{}
	r := run.NewRunner(b)
	spec := func(dt profiler.DType, broken bool) profiler.Spec {
		return profiler.Spec{Kernel: "test_vs_scale", DType: dt, Dims: map[string]int{"N": 777}, Flags: map[string]bool{"broken": broken}}
	}
	// bf16 against the f32 run of the same inputs: within bf16's tolerance
	res := r.Run(context.Background(), spec(profiler.BF16, false), enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusOK || res.Verdict.Checked != 256 || res.Verdict.Rows != "device reference" {
		t.Fatalf("bf16 vs f32: %s %s %+v", res.Status, res.Error, res.Verdict)
	}
	if len(saw["x"]) != 777 {
		t.Errorf("the device run got inputs %v", saw)
	}
	// a kernel that skips its last element is caught
	res = r.Run(context.Background(), spec(profiler.F32, true), enginetest.QuickOptions(), nil)
	if res.Status != profiler.StatusMismatch || !strings.Contains(res.Error, "out[776]") {
		t.Errorf("broken vs good: %s %s", res.Status, res.Error)
	}
	// the outputs compared are the other run's on the inputs given to it
	fam.shift = 1
	res = r.Run(context.Background(), spec(profiler.F32, false), seeded(7), nil)
	if res.Status != profiler.StatusMismatch || res.Verdict.Mismatches != 256 {
		t.Errorf("other inputs: %s %s", res.Status, res.Error)
	}
	fam.shift = 0
	// the other spec's own errors reach the row
	fam.other = profiler.Spec{Knobs: map[string]int{"WG": 48}}
	res = r.Run(context.Background(), spec(profiler.F32, false), seeded(8), nil)
	if res.Status != profiler.StatusError || !strings.Contains(res.Error, "reference: ") || !strings.Contains(res.Error, "WG=48") {
		t.Errorf("bad other spec: %s %s", res.Status, res.Error)
	}
}

// seeded are quick options with another seed: the runner caches a
// reference per shape and seed.
func seeded(seed uint64) profiler.Options {
	o := enginetest.QuickOptions()
	o.Seed = seed
	return o
}
