package profiler

import (
	"math"
	"testing"
)

func TestFillInits(t *testing.T) {
	ones := Fill(BufferSpec{Name: "o", Type: F32, Elems: 3, Init: InitOnes}, 1)
	ar := Fill(BufferSpec{Name: "a", Type: BF16, Elems: 300, Init: InitArange}, 1)
	nm := Fill(BufferSpec{Name: "n", Type: F32, Elems: 20000, Init: InitNormal, Mean: 5, Scale: 0.5}, 1)
	if ones[0] != 1 || ones[2] != 1 {
		t.Errorf("ones %v", ones)
	}
	if ar[3] != 3 || ar[257] != BF16.Round(257) {
		t.Errorf("arange %v %v", ar[3], ar[257])
	}
	mean := 0.0
	for _, v := range nm {
		mean += float64(v)
	}
	if mean /= float64(len(nm)); math.Abs(mean-5) > 0.05 {
		t.Errorf("normal(5, 0.5) mean %g", mean)
	}
}

func TestResultReason(t *testing.T) {
	cpu := "compiling rowsum (rowsum_entry): the CPU backend cannot run user kernel rowsum: use --backend cuda or metal: " + ErrCannotRun.Error()
	cases := []struct {
		st        Status
		err, want string
		cannotRun bool
	}{
		{StatusInvalid, cpu, "the CPU backend cannot run user kernel rowsum: use --backend cuda or metal", true},
		{StatusInvalid, "BQ=8 must be a multiple of 8·WM=32", "BQ=8 must be a multiple of 8·WM=32", false},
		// A compile error keeps its prefix and log: the log starts there.
		{StatusCompileError, "compiling k (k): k.cu(3): error: x", "compiling k (k): k.cu(3): error: x", false},
		{StatusCrashed, cpu, cpu, false}, // only an invalid spec is one the backend cannot run
		{StatusOK, "", "", false},
	}
	for _, c := range cases {
		r := Result{Status: c.st, Error: c.err}
		if got := r.Reason(); got != c.want {
			t.Errorf("%s %q: Reason() = %q, want %q", c.st, c.err, got, c.want)
		}
		if r.CannotRun() != c.cannotRun {
			t.Errorf("%s %q: CannotRun() = %v, want %v", c.st, c.err, r.CannotRun(), c.cannotRun)
		}
	}
}
