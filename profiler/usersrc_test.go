package profiler

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// uncheckedFamily is test_scale with nothing to check against.
type uncheckedFamily struct{ scaleFamily }

func (uncheckedFamily) Name() string { return "test_unchecked" }
func (uncheckedFamily) Reference(Spec, Inputs, int, uint64) (*Reference, error) {
	return &Reference{Unchecked: true, Rows: "unchecked"}, nil
}

var uncheckedOnce sync.Once

func TestUncheckedStatus(t *testing.T) {
	uncheckedOnce.Do(func() { Register(uncheckedFamily{}) })
	r := NewRunner(&memBackend{})
	res := r.Run(context.Background(), Spec{Kernel: "test_unchecked", DType: F32, Dims: map[string]int{"N": 256}}, quickOptions(), nil)
	if res.Status != StatusUnchecked || res.Verdict == nil || !res.Verdict.Unchecked || res.Stats.N == 0 {
		t.Fatalf("status %s %s verdict %+v", res.Status, res.Error, res.Verdict)
	}
	if res.Status.Failed() {
		t.Error("unchecked counts as failed")
	}
	sum := Summary{ByStatus: map[Status]int{StatusUnchecked: 1}, Total: 1}
	if sum.ExitCode() != 0 || !strings.Contains(sum.String(), "1 unchecked") {
		t.Errorf("summary %q exit %d", sum.String(), sum.ExitCode())
	}
}

// cannotRun refuses every program the way the CPU backend refuses user sources.
type cannotRun struct{ memBackend }

func (c *cannotRun) Compile(p Program) (Kernel, error) {
	return nil, fmt.Errorf("no: %w", ErrCannotRun)
}

func TestCannotRunIsInvalidWithBudget(t *testing.T) {
	registerTestFamily()
	res := NewRunner(&cannotRun{}).Run(context.Background(), Spec{Kernel: "test_scale", DType: F32, Dims: map[string]int{"N": 256}}, quickOptions(), nil)
	if res.Status != StatusInvalid || !strings.Contains(res.Error, "no: ") || len(res.Budget) != 1 {
		t.Errorf("status %s %q budget %v", res.Status, res.Error, res.Budget)
	}
}

func TestProgramKeyIncludesSource(t *testing.T) {
	a := Program{Source: "u", Entry: "k", Code: "int a;", File: "k.cu"}
	b := a
	b.Code = "int b;"
	c := a
	c.Includes = map[string]string{"h.h": "x"}
	if programKey(a) == programKey(b) || programKey(a) == programKey(c) || programKey(a) != programKey(a) {
		t.Error("the program key ignores the source or its includes")
	}
}

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

// versionedFamily is test_scale whose definition changes (a reloaded user kernel).
type versionedFamily struct {
	scaleFamily
	version string
	refs    *int
}

func (versionedFamily) Name() string      { return "test_versioned" }
func (v versionedFamily) Version() string { return v.version }
func (v versionedFamily) Reference(s Spec, in Inputs, maxRows int, seed uint64) (*Reference, error) {
	*v.refs++
	return v.scaleFamily.Reference(s, in, maxRows, seed)
}

func TestReferenceCacheFollowsVersion(t *testing.T) {
	n := 0
	Replace(versionedFamily{version: "a", refs: &n})
	r := NewRunner(&memBackend{})
	s := Spec{Kernel: "test_versioned", DType: F32, Dims: map[string]int{"N": 256}}
	for range 2 {
		if res := r.Run(context.Background(), s, quickOptions(), nil); res.Status != StatusOK {
			t.Fatalf("%s %s", res.Status, res.Error)
		}
	}
	if n != 1 {
		t.Fatalf("reference computed %d times for one version, want 1", n)
	}
	Replace(versionedFamily{version: "b", refs: &n})
	r.Run(context.Background(), s, quickOptions(), nil)
	if n != 2 {
		t.Errorf("a new version reused the cached reference (%d computations)", n)
	}
}
