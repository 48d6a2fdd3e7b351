package run_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mltop/mltop/internal/enginetest"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// precompilingBackend records every precompile (from the pool's
// goroutines) and fails to compile the programs in bad, both ways.
type precompilingBackend struct {
	enginetest.MemBackend

	mu  sync.Mutex
	pre []string
	got chan string
	bad map[string]bool
}

func progName(p profiler.Program) string { return p.Source + " " + p.Macros[0].Value }

func (b *precompilingBackend) Precompile(p profiler.Program) {
	b.mu.Lock()
	b.pre = append(b.pre, progName(p))
	b.mu.Unlock()
	b.got <- progName(p)
}

func (b *precompilingBackend) Compile(p profiler.Program) (profiler.Kernel, error) {
	if b.bad[progName(p)] {
		return nil, errors.New("error: expected ';' (test)")
	}
	return b.MemBackend.Compile(p)
}

type collect struct{ rows []profiler.Result }

func (c *collect) Write(r profiler.Result) error { c.rows = append(c.rows, r); return nil }
func (c *collect) Close() error                  { return nil }

// wait takes n precompiles off got, failing (not hanging) if they never come.
func (b *precompilingBackend) wait(t *testing.T, n int) []string {
	t.Helper()
	var names []string
	for range n {
		select {
		case s := <-b.got:
			names = append(names, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d precompiles arrived: %v", len(names), n, names)
		}
	}
	return names
}

func TestRunJobsPrefetchesAheadInParallel(t *testing.T) {
	b := &precompilingBackend{got: make(chan string, 64), bad: map[string]bool{"scale 64": true}}
	r := run.NewRunner(b)
	defer r.Close()
	var jobs []profiler.Job
	var want []string
	type spec struct {
		wg   int
		flag string
	}
	specs := []spec{{32, ""}, {64, ""}, {128, ""}, {32, "broken"}, {64, "drift"}, {64, ""}, {128, "drift"}}
	for _, s := range specs {
		sp := profiler.Spec{Kernel: "test_scale", DType: profiler.F32, Knobs: map[string]int{"WG": s.wg}, Dims: map[string]int{"N": 64}}
		if s.flag != "" {
			sp.Flags = map[string]bool{s.flag: true}
		}
		jobs = append(jobs, profiler.Job{Spec: sp, Options: enginetest.QuickOptions()})
		want = append(want, fmt.Sprint(s.wg, s.flag))
	}
	sink := &collect{}
	sum, err := run.Jobs(context.Background(), r, jobs, nil, []profiler.Sink{sink}, run.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	// results in the order of the jobs, whatever order the compiles finished in
	var got []string
	for _, res := range sink.rows {
		flag := ""
		for _, f := range []string{"broken", "drift"} {
			if res.Spec.Flags[f] {
				flag = f
			}
		}
		got = append(got, fmt.Sprint(res.Spec.Knobs["WG"], flag))
	}
	if !slices.Equal(got, want) {
		t.Errorf("results in order %v, want %v", got, want)
	}
	// the compile error lands on the spec whose program it is, and only there
	for i, res := range sink.rows {
		wantSt := profiler.StatusOK
		switch {
		case specs[i].wg == 64 && specs[i].flag == "":
			wantSt = profiler.StatusCompileError
		case specs[i].flag != "": // broken and drift are wrong on purpose
			wantSt = profiler.StatusMismatch
		}
		if res.Status != wantSt {
			t.Errorf("spec %d (%v): %s (%s), want %s", i, specs[i], res.Status, res.Error, wantSt)
		}
	}
	if sum.ByStatus[profiler.StatusCompileError] != 2 {
		t.Errorf("summary %+v", sum)
	}
	// every distinct program of the specs after the first is precompiled
	// exactly once, whatever the lookahead (WG=64 plain, which fails, is
	// asked for by specs 2 and 6)
	names := b.wait(t, 5)
	sort.Strings(names)
	wantPre := []string{"scale 128", "scale 64", "scale_broken 32", "scale_drift 128", "scale_drift 64"}
	if !slices.Equal(names, wantPre) {
		t.Errorf("precompiled %v, want %v", names, wantPre)
	}
}

// The pool runs exactly its size of compiles at once, first in first out.
func TestCompilePoolBoundedFIFO(t *testing.T) {
	const size, total = 3, 10
	var p run.CompilePool
	defer p.Close()
	started := make(chan int, total)
	gates := make([]chan struct{}, total)
	for i := range total {
		gates[i] = make(chan struct{})
		p.Submit(size, func() {
			started <- i
			<-gates[i]
		})
	}
	var first []int
	for range size {
		first = append(first, <-started)
	}
	// the size goroutines are all blocked in their task: nothing else runs,
	// and the rest wait in the queue
	if q := p.Queued(); q != total-size {
		t.Fatalf("%d queued with %d running, want %d: the pool is not bounded to %d", q, size, total-size, size)
	}
	sort.Ints(first)
	if !slices.Equal(first, []int{0, 1, 2}) {
		t.Fatalf("first to start %v, want the first submitted [0 1 2]", first)
	}
	// release one at a time: the next in submission order starts
	for i := range total - size {
		close(gates[i])
		if next := <-started; next != i+size {
			t.Fatalf("after releasing %d, %d started; want %d (first in, first out)", i, next, i+size)
		}
	}
	for i := total - size; i < total; i++ {
		close(gates[i])
	}
}

func TestLookaheadIsTwiceTheCompileWorkers(t *testing.T) {
	t.Setenv(run.CompileThreadsEnv, "3")
	if w := run.CompileWorkers(); w != 3 {
		t.Errorf("CompileWorkers() with %s=3 = %d", run.CompileThreadsEnv, w)
	}
	if run.Lookahead() != 6 {
		t.Errorf("Lookahead() = %d, want 6", run.Lookahead())
	}
}

// logExec records the order in which Jobs prefetches and runs specs.
type logExec struct{ log []string }

func (e *logExec) Device() profiler.DeviceInfo { return profiler.DeviceInfo{} }
func (e *logExec) Close() error                { return nil }
func (e *logExec) Prefetch(j profiler.Job)     { e.log = append(e.log, fmt.Sprint("p", j.Spec.Dims["N"])) }
func (e *logExec) Run(_ context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	e.log = append(e.log, fmt.Sprint("r", s.Dims["N"]))
	return profiler.Result{Spec: s, Status: profiler.StatusOK}
}

// Jobs prefetches the Lookahead specs after the one about to run before
// the first run, then one more per run; each spec once, in order, the
// first never (its own run compiles it).
func TestJobsPrefetchLookahead(t *testing.T) {
	L := run.Lookahead()
	n := L + 3
	var jobs []profiler.Job
	for i := range n {
		jobs = append(jobs, profiler.Job{Spec: profiler.Spec{Kernel: "test_scale", Dims: map[string]int{"N": i}}})
	}
	e := &logExec{}
	if _, err := run.Jobs(context.Background(), e, jobs, nil, nil, run.Hooks{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	next := 1
	for i := range n {
		for ; next <= i+L && next < n; next++ {
			want = append(want, fmt.Sprint("p", next))
		}
		want = append(want, fmt.Sprint("r", i))
	}
	if !slices.Equal(e.log, want) {
		t.Errorf("calls\n%v\nwant\n%v", e.log, want)
	}
}

// A worker hands prefetch requests to its Runner's compile pool and
// answers only the run requests, in order.
func TestServeWorkerPrefetches(t *testing.T) {
	b := &precompilingBackend{got: make(chan string, 16), bad: map[string]bool{}}
	var in strings.Builder
	enc := json.NewEncoder(&in)
	type req struct {
		Prefetch bool             `json:"prefetch,omitempty"`
		Spec     profiler.Spec    `json:"spec"`
		Options  profiler.Options `json:"options"`
	}
	for _, wg := range []int{64, 128} {
		_ = enc.Encode(req{Prefetch: true, Spec: scaleSpec(64, wg)})
	}
	// The prefetches are prepared on a goroutine of their own, so a run of
	// the same spec may come first and leave nothing to precompile: the
	// runs are of another spec.
	_ = enc.Encode(req{Spec: scaleSpec(64, 32), Options: enginetest.QuickOptions()})
	var out bytes.Buffer
	// Close drops queued compiles: the precompiles are collected before it.
	var names []string
	r := &closeAfter{Runner: run.NewRunner(b), before: func() { names = b.wait(t, 2) }}
	err := run.ServeWorker(strings.NewReader(in.String()), &out, func() (profiler.Executor, error) { return r, nil })
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if !slices.Equal(names, []string{"scale 128", "scale 64"}) {
		t.Errorf("precompiled %v", names)
	}
	var wgs []int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			Type   string           `json:"type"`
			Result *profiler.Result `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m.Type == "result" {
			if m.Result.Status != profiler.StatusOK {
				t.Errorf("%s %s", m.Result.Status, m.Result.Error)
			}
			wgs = append(wgs, m.Result.Spec.Knobs["WG"])
		}
	}
	if !slices.Equal(wgs, []int{32}) {
		t.Errorf("results for WG %v, want [32]: one per run request, none per prefetch", wgs)
	}
}

// closeAfter runs before, then closes the Runner.
type closeAfter struct {
	*run.Runner
	before func()
}

func (c *closeAfter) Close() error {
	c.before()
	return c.Runner.Close()
}

// slowPrefetcher is an executor whose Prefetch waits for release.
type slowPrefetcher struct {
	*run.Runner
	release  chan struct{}
	prepared chan string
}

func (s *slowPrefetcher) Prefetch(j profiler.Job) {
	<-s.release
	s.prepared <- j.Spec.String()
}

// A worker prepares the prefetch requests beside the specs it runs, not
// before them: a spec sent after a prefetch is answered while that
// prefetch is still being prepared, and the prefetches are still made,
// in order.
func TestServeWorkerPrefetchesBesideRuns(t *testing.T) {
	var in strings.Builder
	enc := json.NewEncoder(&in)
	type req struct {
		Prefetch bool             `json:"prefetch,omitempty"`
		Spec     profiler.Spec    `json:"spec"`
		Options  profiler.Options `json:"options"`
	}
	_ = enc.Encode(req{Prefetch: true, Spec: scaleSpec(64, 64)})
	_ = enc.Encode(req{Prefetch: true, Spec: scaleSpec(64, 128)})
	_ = enc.Encode(req{Spec: scaleSpec(64, 32), Options: enginetest.QuickOptions()})
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, in.String()) // stdin stays open: the worker waits for more
	}()
	x := &slowPrefetcher{Runner: run.NewRunner(&enginetest.MemBackend{}), release: make(chan struct{}), prepared: make(chan string, 2)}
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- run.ServeWorker(pr, outW, func() (profiler.Executor, error) { return x, nil })
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	result := make(chan string, 1)
	go func() {
		for lines.Scan() {
			var m struct {
				Type   string           `json:"type"`
				Result *profiler.Result `json:"result"`
			}
			if json.Unmarshal(lines.Bytes(), &m) == nil && m.Type == "result" {
				result <- fmt.Sprint(m.Result.Status, " WG=", m.Result.Spec.Knobs["WG"])
			}
		}
	}()
	select {
	case got := <-result:
		if got != "ok WG=32" {
			t.Errorf("result %q, want ok WG=32", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the spec waited for the prefetches ahead of it to be prepared")
	}
	close(x.release)
	for _, want := range []string{scaleSpec(64, 64).String(), scaleSpec(64, 128).String()} {
		select {
		case got := <-x.prepared:
			if got != want {
				t.Errorf("prefetched %s, want %s (in order)", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the prefetch of %s was never made", want)
		}
	}
	pw.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}
