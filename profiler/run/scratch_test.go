package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mltop/mltop/cpu"
	"github.com/mltop/mltop/kernels/kit/host"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// ticketFamily's kernel adds a block counter's value to every y = x + c
// and then bumps the counter, as a kernel whose last block is told by a
// ticket would: it is right only while the counter holds its initial
// value at every launch. With role scratch_reset the runner restores it
// before every rep; with role scratch (kept across launches) the second
// launch is wrong, and the check after timing must say so, which shows
// the test can fail. setup adds an untimed dispatch of the same kernel
// before the verified run: the counter must be reset after it too.
type ticketFamily struct {
	role  profiler.Role
	init  profiler.InitKind // zero, ones or poison (the kernel reads NaN as -1)
	setup bool
}

func (f ticketFamily) Name() string {
	return fmt.Sprintf("test_ticket_%s_%s_%t", f.role, f.init, f.setup)
}
func (ticketFamily) Doc() string { return "y = x + counter, counter++ (runner tests)" }
func (ticketFamily) Schema() profiler.Schema {
	return profiler.Schema{Dims: []profiler.Param{{Name: "N", Min: 1, Max: 1 << 20, Default: 64}}, DTypes: []profiler.DType{profiler.F32}}
}
func (ticketFamily) Validate(profiler.Spec, profiler.DeviceInfo) error { return nil }
func (f ticketFamily) Plan(s profiler.Spec, _ profiler.DeviceInfo) (*profiler.Plan, error) {
	n := int64(s.Dims["N"])
	d := profiler.Dispatch{Name: "ticket", Program: profiler.Program{Source: "test_ticket", Entry: "test_ticket"},
		Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1}, Args: []string{"x", "y", "counter"}}
	p := &profiler.Plan{
		Buffers: []profiler.BufferSpec{
			{Name: "x", Role: profiler.In, Type: profiler.F32, Elems: n, Init: profiler.InitNormal, Scale: 1},
			{Name: "y", Role: profiler.Out, Type: profiler.F32, Elems: n, Init: profiler.InitPoison},
			{Name: "counter", Role: f.role, Type: profiler.F32, Elems: 4, Init: f.init},
		},
		Dispatches: []profiler.Dispatch{d},
		Bytes:      float64(8 * n),
	}
	if f.setup {
		p.Setup = []profiler.Dispatch{d}
	}
	return p, nil
}
func (f ticketFamily) Reference(s profiler.Spec, in profiler.Inputs, maxRows int, seed uint64) (*profiler.Reference, error) {
	start := map[profiler.InitKind]float64{profiler.InitZero: 0, profiler.InitOnes: 1, profiler.InitPoison: -1}[f.init]
	c := profiler.Check{Buffer: "y"}
	for i, v := range in["x"] {
		c.Index = append(c.Index, i)
		c.Want = append(c.Want, float64(v)+start)
	}
	return &profiler.Reference{Checks: []profiler.Check{c}, RowsChecked: len(c.Index), RowsTotal: len(c.Index), Rows: "all"}, nil
}
func (ticketFamily) Tolerance(d profiler.DType) profiler.Tolerance {
	return profiler.DefaultTolerances[d]
}

var registerTicket sync.Once

func registerTicketFamilies(fams []ticketFamily) {
	registerTicket.Do(func() {
		host.RegisterKernel("test_ticket", func(g *host.Group) {
			x, y, counter := g.Arg(0, profiler.F32), g.Arg(1, profiler.F32), g.Arg(2, profiler.F32)
			c := counter.At(0)
			if c != c { // poison: a restore to zeros instead would be caught
				c = -1
			}
			for i := range x.Len() {
				y.Set(i, x.At(i)+c)
			}
			counter.Set(0, c+1)
		})
		for _, f := range fams {
			profiler.Register(f)
		}
	})
}

func TestScratchResetBeforeEveryLaunch(t *testing.T) {
	cases := []struct {
		name    string
		fam     ticketFamily
		noCopy  bool
		want    profiler.Status
		wantErr string
	}{
		{"zeros", ticketFamily{profiler.ScratchReset, profiler.InitZero, false}, false, profiler.StatusOK, ""},
		{"ones, device copy", ticketFamily{profiler.ScratchReset, profiler.InitOnes, false}, false, profiler.StatusOK, ""},
		{"ones, upload", ticketFamily{profiler.ScratchReset, profiler.InitOnes, false}, true, profiler.StatusOK, ""},
		{"zeros after a setup dispatch", ticketFamily{profiler.ScratchReset, profiler.InitZero, true}, false, profiler.StatusOK, ""},
		{"ones after a setup dispatch", ticketFamily{profiler.ScratchReset, profiler.InitOnes, true}, true, profiler.StatusOK, ""},
		{"poison", ticketFamily{profiler.ScratchReset, profiler.InitPoison, false}, false, profiler.StatusOK, ""},
		{"kept across launches", ticketFamily{profiler.Scratch, profiler.InitZero, false}, false, profiler.StatusMismatch, "wrong after the timed launches"},
		{"kept after a setup dispatch", ticketFamily{profiler.Scratch, profiler.InitZero, true}, false, profiler.StatusMismatch, ""},
	}
	var fams []ticketFamily
	for _, c := range cases {
		if !strings.HasSuffix(c.name, "upload") {
			fams = append(fams, c.fam)
		}
	}
	registerTicketFamilies(fams)
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	opt := profiler.DefaultOptions()
	opt.Stop = profiler.StopRule{Noise: 0.5, MinSamples: 10, MinTime: 1e-6, MaxTime: 1, MaxSamples: 20}
	opt.Cache = profiler.CacheHot
	opt.Warmup = 1e-6
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b profiler.Backend = be
			if tc.noCopy {
				b = noCopy{be}
			}
			res := run.NewRunner(b).Run(context.Background(), profiler.Spec{Kernel: tc.fam.Name(), DType: profiler.F32, Dims: map[string]int{"N": 64}}, opt, nil)
			if res.Status != tc.want {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Error, tc.want)
			}
			if res.Stats.N < 10 {
				t.Errorf("%d samples: the test needs many reps", res.Stats.N)
			}
			if !strings.Contains(res.Error, tc.wantErr) {
				t.Errorf("error %q, want it to say %q", res.Error, tc.wantErr)
			}
		})
	}
}
