package profiler

import (
	"fmt"
	"strings"
)

// CacheMode says what the last-level cache holds when a timed sample starts.
type CacheMode string

const (
	// CacheCold (the default): before each sample the backend streams a
	// buffer of a few times the last-level cache through it *reading*, so
	// the kernel's data is gone and what is left is clean: evicting it
	// costs the timed kernel nothing. This is what Nsight Compute's
	// --cache-control all measures (it flushes and invalidates).
	CacheCold CacheMode = "cold"
	// CacheHot: no flush; the kernel's data of the previous sample may
	// still be in the cache (and its outputs dirty there).
	CacheHot CacheMode = "hot"
	// CacheDirty: before each sample the backend *writes* a buffer of twice
	// the cache (mltop's flush until issue 12): the cache is full of dirty
	// lines of another buffer, which the timed kernel must write back to
	// memory as it evicts them. Slower than cold by up to the time to write
	// the cache back; useful to see that cost, not to compare with ncu.
	CacheDirty CacheMode = "dirty"
	// CacheFlush is reported, never asked: samples taken after a backend's
	// one flush, not known to leave clean or dirty lines (Timing.Cache).
	CacheFlush CacheMode = "flush"
)

// CacheModes lists the modes in the order help texts show them.
var CacheModes = []CacheMode{CacheCold, CacheHot, CacheDirty}

// ParseCacheMode accepts "cold", "hot" and "dirty" ("" is cold).
func ParseCacheMode(s string) (CacheMode, error) {
	switch m := CacheMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return CacheCold, nil
	case CacheCold, CacheHot, CacheDirty:
		return m, nil
	}
	return "", fmt.Errorf("cache mode %q: use %s", s, cacheModesWant)
}

// cacheModesWant says what a cache mode may be, in every message that
// refuses one.
const cacheModesWant = "cold (flush, leaving clean lines; the default), hot (no flush) or dirty (flush by writing, leaving dirty lines)"

// Phases is where one spec's wall time went, in seconds. Everything but
// Warmup and Measure is overhead a sweep pays per spec.
type Phases struct {
	Plan        float64 `json:"plan"`         // resolve, validate, plan, memory check
	Compile     float64 `json:"compile"`      // compile or cache lookup, occupancy queries
	Alloc       float64 `json:"alloc"`        // device buffers: allocate and upload
	Inputs      float64 `json:"inputs"`       // generate inputs (cached per shape and seed)
	Reference   float64 `json:"reference"`    // float64 reference (cached per shape and seed)
	Verify      float64 `json:"verify"`       // first run, download, compare (VerifyGPU is part of it)
	Warmup      float64 `json:"warmup"`       //
	Measure     float64 `json:"measure"`      // timed samples, flushes included
	VerifyAfter float64 `json:"verify_after"` // the check after the timed launches
	Free        float64 `json:"free"`         // releasing device buffers
	Worker      float64 `json:"worker"`       // round trip to the worker subprocess (JSON, pipes)
	// Ahead is work done for this spec before it ran, off the device
	// thread while earlier specs were measured (its kernels' modules
	// loaded ahead). It is not part of the spec's wall time: Total and
	// the shares leave it out.
	Ahead float64 `json:"ahead,omitempty"`
	// VerifyGPU is the device time of the verification run(s) inside
	// Verify: the setup dispatches and the kernels run once before
	// timing, as the backend timed them (profiler.RunTimer: CUDA events,
	// Metal's command-buffer GPU times, the CPU's wall clock around its Go
	// run). It is a part of Verify, not a phase of its own: Total counts
	// it once, in Verify. 0 where the backend does not time its runs.
	VerifyGPU float64 `json:"verify_gpu,omitempty"`
}

// Add accumulates q into p.
func (p *Phases) Add(q Phases) {
	p.Plan += q.Plan
	p.Compile += q.Compile
	p.Alloc += q.Alloc
	p.Inputs += q.Inputs
	p.Reference += q.Reference
	p.Verify += q.Verify
	p.Warmup += q.Warmup
	p.Measure += q.Measure
	p.VerifyAfter += q.VerifyAfter
	p.Free += q.Free
	p.Worker += q.Worker
	p.Ahead += q.Ahead
	p.VerifyGPU += q.VerifyGPU
}

func (p *Phases) fields() []struct {
	name string
	v    *float64
} {
	return []struct {
		name string
		v    *float64
	}{
		{"plan", &p.Plan}, {"compile", &p.Compile}, {"alloc", &p.Alloc}, {"inputs", &p.Inputs},
		{"reference", &p.Reference}, {"verify", &p.Verify}, {"warmup", &p.Warmup}, {"measure", &p.Measure},
		{"verify_after", &p.VerifyAfter}, {"free", &p.Free}, {"worker", &p.Worker},
	}
}

// Total is the sum of the phases: the spec's wall time (Ahead, done
// before the spec ran, is not in it).
func (p Phases) Total() float64 {
	t := 0.0
	for _, f := range p.fields() {
		t += *f.v
	}
	return t
}

// String prints the phases that took time, in ms, with their share (and
// for verify, how long of it the device ran kernels, where that is known).
func (p Phases) String() string {
	tot := p.Total()
	var b strings.Builder
	for _, f := range p.fields() {
		if *f.v <= 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %.1f ms", f.name, *f.v*1e3)
		var notes []string
		if tot > 0 {
			notes = append(notes, fmt.Sprintf("%.0f%%", 100**f.v/tot))
		}
		if f.name == "verify" && p.VerifyGPU > 0 {
			notes = append(notes, fmt.Sprintf("%.1f ms of it running kernels", p.VerifyGPU*1e3))
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
	}
	if p.Ahead > 0 {
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "ahead %.1f ms (off the critical path)", p.Ahead*1e3)
	}
	return b.String()
}
