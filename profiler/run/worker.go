package run

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mltop/mltop/profiler"
)

// The worker protocol: JSON lines. The parent starts `mltop worker
// --backend X`; the worker answers one hello (or fatal) line, then for each
// request line {spec, options} it writes progress lines and one result line.
// A GPU fault or hang kills only the worker; the parent records the spec as
// crashed or timeout with the worker's last words and starts a fresh worker
// for the next spec.

type workerRequest struct {
	Prefetch bool          `json:"prefetch,omitempty"` // only prepare the spec; no answer
	Spec     profiler.Spec `json:"spec"`
	// Options are the spec's settings as the parent runs it: in a sweep
	// with --race, Stop.Outpaced carries the bound the parent made from
	// the best of the spec's shape (the worker keeps no best of its own).
	Options profiler.Options `json:"options"`
	// Version is the parent's version of the spec's family (a user kernel
	// reloaded from its files: profiler.Versioned). A worker that has
	// another one reloads its families before it runs the spec.
	Version string `json:"version,omitempty"`
}

type workerMessage struct {
	Type     string               `json:"type"` // hello, fatal, progress, result
	Device   *profiler.DeviceInfo `json:"device,omitempty"`
	Error    string               `json:"error,omitempty"`
	Progress *profiler.Progress   `json:"progress,omitempty"`
	Result   *profiler.Result     `json:"result,omitempty"`
	// Again, on a fatal line, says that a fresh worker may start where
	// this one could not (StartAgain).
	Again bool `json:"again,omitempty"`
}

// WorkerFatal is a worker's own account of why it could not start (its
// fatal line), complete as it stands: callers pass it on without wrapping.
type WorkerFatal struct {
	Msg   string
	Again bool // a fresh worker may start (StartAgain)
}

func (e *WorkerFatal) Error() string { return e.Msg }

// StartAgain marks err, a backend's failure to open, as one that a fresh
// process may not meet: the CUDA driver refused cuInit while it was still
// releasing the GPU of a process that had just ended (seen once in 18
// sweeps run back to back on a 4×H200 host: that device was left out of
// the whole sweep). The pool then starts one more worker, once. The
// message is err's.
func StartAgain(err error) error { return &startAgain{err} }

type startAgain struct{ error }

func (e *startAgain) Unwrap() error { return e.error }

// startAgainPause is how long the pool waits before it starts a worker
// again after a StartAgain: the driver's release of the ended process's
// GPU takes a moment.
const startAgainPause = 300 * time.Millisecond

// ServeWorker runs the worker side until in closes. open is called once;
// its error is reported to the parent as a fatal line.
func ServeWorker(in io.Reader, out io.Writer, open func() (profiler.Executor, error)) error {
	return ServeWorkerReload(in, out, open, nil)
}

// ServeWorkerReload is ServeWorker with live reload: when a request's
// family version differs from the worker's (the parent reloaded a user
// kernel after its files changed), reload is called to register the
// families anew before the spec runs, so the worker never runs the old
// kernel. A reload that fails, or that still leaves another version (the
// files changed again in between), makes the spec invalid with the reason;
// the parent's watcher reloads again and the next request catches up.
func ServeWorkerReload(in io.Reader, out io.Writer, open func() (profiler.Executor, error), reload func() error) error {
	var mu sync.Mutex
	enc := json.NewEncoder(out)
	send := func(m workerMessage) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(m)
	}
	exec, err := open()
	if err != nil {
		var again *startAgain
		_ = send(workerMessage{Type: "fatal", Error: err.Error(), Again: errors.As(err, &again)})
		return err
	}
	defer exec.Close()
	shareFromEnv(exec)
	dev := exec.Device()
	if err := send(workerMessage{Type: "hello", Device: &dev}); err != nil {
		return err
	}
	prefetches := prefetchInBackground(exec)
	if prefetches != nil {
		defer close(prefetches)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var req workerRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			_ = send(workerMessage{Type: "fatal", Error: fmt.Sprintf("bad request: %v", err)})
			continue
		}
		stale := syncVersion(req, reload)
		if req.Prefetch {
			if prefetches != nil && stale == nil {
				prefetches <- profiler.Job{Spec: req.Spec, Options: req.Options}
			}
			continue
		}
		if stale != nil {
			res := profiler.Result{Time: time.Now().UTC(), Spec: req.Spec, Backend: dev.Backend, Device: dev.Name, Status: profiler.StatusInvalid, Error: stale.Error()}
			if err := send(workerMessage{Type: "result", Result: &res}); err != nil {
				return err
			}
			continue
		}
		res := exec.Run(context.Background(), req.Spec, req.Options, func(p profiler.Progress) {
			_ = send(workerMessage{Type: "progress", Progress: &p})
		})
		if err := send(workerMessage{Type: "result", Result: &res}); err != nil {
			return err
		}
	}
	return sc.Err()
}

// prefetchInBackground hands the jobs sent on the channel it returns to
// exec's Prefetch, in order, on a goroutine of their own, until the
// channel is closed; nil when exec does not prefetch. The parent sends a
// prefetch just before each spec: planned on the loop that reads the
// requests, it held the spec back (a plan, a lookup in the caches) with
// the GPU idle.
func prefetchInBackground(exec profiler.Executor) chan<- profiler.Job {
	pf, ok := exec.(Prefetcher)
	if !ok {
		return nil
	}
	jobs := make(chan profiler.Job, 4*Lookahead()+16)
	go func() {
		for j := range jobs {
			pf.Prefetch(j)
		}
	}()
	return jobs
}

// syncVersion brings the worker's definition of req's family to the
// parent's version, through reload; the error says why it could not.
func syncVersion(req workerRequest, reload func() error) error {
	if req.Version == "" || profiler.FamilyVersion(req.Spec.Kernel) == req.Version {
		return nil
	}
	if reload == nil {
		return fmt.Errorf("the worker has another version of %s than the session and cannot reload it: restart mltop", req.Spec.Kernel)
	}
	if err := reload(); err != nil {
		return fmt.Errorf("the worker could not reload %s: %w", req.Spec.Kernel, err)
	}
	if v := profiler.FamilyVersion(req.Spec.Kernel); v != req.Version {
		return fmt.Errorf("the files of %s changed again while the worker reloaded them (version %.8s, the session has %.8s): save again, or press r", req.Spec.Kernel, v, req.Version)
	}
	return nil
}

// WorkerPool is an Executor that runs each spec in a worker subprocess.
type WorkerPool struct {
	argv func() []string // the worker's command line, read at each start
	env  []string
	dev  profiler.DeviceInfo
	// ready is closed when the first worker said hello or failed to
	// (startErr); dev is set before. Closed at once by NewWorkerPoolArgv.
	ready    chan struct{}
	startErr error
	// starts bounds every start of a worker: once it ends (the context
	// the pool was made with, or Close: errClosed), a worker still
	// starting is killed and no other starts.
	starts      context.Context
	closeStarts context.CancelCauseFunc

	mu sync.Mutex
	w  *worker
	// opened is when the first worker started; startup the time its
	// workers took to say hello, all of them (see DeviceTime).
	// Under tmu, not mu: mu is held while a spec runs.
	tmu     sync.Mutex
	opened  time.Time
	startup time.Duration
}

type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan workerMessage
	done   chan struct{} // closed when stdout ends
	quit   chan struct{} // closed by kill: the reader stops handing lines over
	stderr *tailBuffer
	argv   []string // the command line it started with
	// byWatchdog: mltop killed it for taking too long, so a "signal:
	// killed" is that, not the out-of-memory killer.
	byWatchdog bool
}

// NewWorkerPool starts one worker with argv cmd (e.g. [mltop worker
// --backend cuda]) and waits for its hello, so an unavailable backend fails
// here with the worker's reason.
func NewWorkerPool(cmd []string, env []string) (*WorkerPool, error) {
	return NewWorkerPoolArgv(func() []string { return cmd }, env)
}

// NewWorkerPoolArgv is NewWorkerPool with a command line that may grow:
// argv is read at each worker start, and a worker whose command line is no
// longer argv's (the session loaded another user kernel, passed as an
// argument) is replaced before the next spec.
//
// A worker that dies before it says hello, without saying why (a crash in
// the driver's start, not a "fatal" such as no GPU), is started once more.
func NewWorkerPoolArgv(argv func() []string, env []string) (*WorkerPool, error) {
	return NewWorkerPoolContext(context.Background(), argv, env)
}

// NewWorkerPoolContext is NewWorkerPoolArgv whose starts end with ctx
// (see StartWorkerPoolContext): when ctx ends first (ctrl-C), the worker
// that was starting is killed and gone when it returns, and the error is
// a StartStopped.
func NewWorkerPoolContext(ctx context.Context, argv func() []string, env []string) (*WorkerPool, error) {
	p := StartWorkerPoolContext(ctx, argv, env)
	<-p.ready // prompt once ctx ends: the start kills its worker then
	if p.startErr != nil {
		return nil, p.startErr
	}
	return p, nil
}

// StartWorkerPool is NewWorkerPoolArgv without the wait: the first worker
// starts in the background (in its turn, see WorkerStartsEnv) and Wait
// says when it said hello. Run, Ensure and Close wait for the start;
// Device is the zero DeviceInfo until then. A multi-device sweep starts
// every device's pool so and sets each device to work once it is ready.
func StartWorkerPool(argv func() []string, env []string) *WorkerPool {
	return StartWorkerPoolContext(context.Background(), argv, env)
}

// StartWorkerPoolContext is StartWorkerPool whose worker starts end with
// ctx: the first one and each fresh one after a crash (Run, Ensure). A
// worker still starting when ctx ends (ctrl-C) is killed at once instead
// of waited for, and its start fails with a StartStopped; later starts do
// not begin. What runs after a start (specs) is Run's ctx's to stop.
func StartWorkerPoolContext(ctx context.Context, argv func() []string, env []string) *WorkerPool {
	p := &WorkerPool{argv: argv, env: env, ready: make(chan struct{})}
	p.starts, p.closeStarts = context.WithCancelCause(ctx)
	p.mu.Lock() // held by the start: the pool's other users wait for it
	go func() {
		defer p.mu.Unlock()
		defer close(p.ready)
		w, dev, err := p.start(context.Background())
		var fatal *WorkerFatal
		if again := errors.As(err, &fatal) && fatal.Again; again || errors.Is(err, errExitedEarly) {
			first := err
			if again {
				select {
				case <-time.After(startAgainPause):
				case <-p.starts.Done(): // the next start says it was stopped
				}
			}
			if w, dev, err = p.start(context.Background()); err != nil {
				err = fmt.Errorf("%w (and before that: %v)", err, first)
			}
		}
		p.w, p.dev, p.startErr = w, dev, err
	}()
	return p
}

// Started says whether the first worker's start is over, and how it
// failed if it did; it does not wait.
func (p *WorkerPool) Started() (bool, error) {
	select {
	case <-p.ready:
		return true, p.startErr
	default:
		return false, nil
	}
}

// Wait waits until the pool's first worker said hello (nil) or failed to
// start (why), or ctx ends (its error; the start goes on, and Close stops
// it).
func (p *WorkerPool) Wait(ctx context.Context) error {
	select {
	case <-p.ready:
		return p.startErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// environ is a worker's environment: this process's, and the pool's own.
func (p *WorkerPool) environ() []string {
	return append(os.Environ(), p.env...)
}

// interrupted says whether a process ended by SIGINT or SIGTERM.
func interrupted(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM)
}

// TraceStartupEnv, when set, makes workers show their stderr as well as
// keep it, so the start-up steps the backends print (cuda.StartupTraceEnv
// is this name) are seen.
const TraceStartupEnv = "MLTOP_TRACE_STARTUP"

// errClosed: the pool was closed before its worker started.
var errClosed = errors.New("the worker pool was closed before its worker started")

// StartStopped is the error of a worker start that a context stopped
// (ctrl-C, SIGTERM, Close): the starting worker was killed. It is
// context.Canceled and its cause to errors.Is.
type StartStopped struct{ Cause error }

func (e *StartStopped) Error() string {
	switch {
	case errors.Is(e.Cause, errClosed):
		return e.Cause.Error()
	case e.Cause == nil || errors.Is(e.Cause, context.Canceled):
		return "the worker's start was stopped (cancelled by user)"
	}
	return "the worker's start was stopped: " + e.Cause.Error()
}

// stopped is the StartStopped of a start that ctx ended.
func stopped(ctx context.Context) error { return &StartStopped{Cause: context.Cause(ctx)} }

func (e *StartStopped) Unwrap() []error { return []error{context.Canceled, e.Cause} }

// errExitedEarly: the worker ended before it said hello, without a
// "fatal" line saying why.
var errExitedEarly = errors.New("worker exited before it said hello")

// start starts a worker and waits for its hello. It ends early, killing
// the worker, when ctx or the pool's starts end (StartStopped).
func (p *WorkerPool) start(ctx context.Context) (*worker, profiler.DeviceInfo, error) {
	if p.starts.Err() != nil { // closed (or stopped) before: nothing starts
		return nil, profiler.DeviceInfo{}, stopped(p.starts)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(p.starts, func() { cancel(context.Cause(p.starts)) })()
	t0 := time.Now()
	p.tmu.Lock()
	if p.opened.IsZero() {
		p.opened = t0
	}
	p.tmu.Unlock()
	defer func() {
		p.tmu.Lock()
		p.startup += time.Since(t0)
		p.tmu.Unlock()
	}()
	release := acquireStartSlot(ctx.Done(), startLimit(), startSlotWait)
	defer release()       // at the hello, or when the start failed
	if ctx.Err() != nil { // stopped or closed before or while it waited for its turn
		return nil, profiler.DeviceInfo{}, stopped(ctx)
	}
	argv := p.argv()
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = p.environ()
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, profiler.DeviceInfo{}, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, profiler.DeviceInfo{}, err
	}
	w := &worker{cmd: c, stdin: stdin, lines: make(chan workerMessage, 64), done: make(chan struct{}), quit: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	c.Stderr = w.stderr
	if os.Getenv(TraceStartupEnv) != "" {
		c.Stderr = io.MultiWriter(w.stderr, os.Stderr) // the worker's start-up steps, shown
	}
	w.argv = argv
	if err := c.Start(); err != nil {
		return nil, profiler.DeviceInfo{}, fmt.Errorf("starting worker %s: %w", strings.Join(argv, " "), err)
	}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var m workerMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type == "" {
				w.stderr.Write(append(sc.Bytes(), '\n')) // stray output: keep it as last words
				continue
			}
			select {
			case w.lines <- m:
			case <-w.quit: // nobody reads any more; drain stdout so the process can end
			}
		}
	}()
	select {
	case m := <-w.lines:
		switch m.Type {
		case "hello":
			return w, *m.Device, nil
		case "fatal":
			w.kill()
			return nil, profiler.DeviceInfo{}, &WorkerFatal{Msg: m.Error, Again: m.Again}
		}
		w.kill()
		return nil, profiler.DeviceInfo{}, fmt.Errorf("worker said %q before hello", m.Type)
	case <-w.done:
		select { // a fatal line read just before the end still says why
		case m := <-w.lines:
			if m.Type == "fatal" {
				w.kill()
				return nil, profiler.DeviceInfo{}, &WorkerFatal{Msg: m.Error, Again: m.Again}
			}
		default:
		}
		w.kill()
		if interrupted(w.cmd.ProcessState) { // ctrl-C reached the worker too: no second start
			return nil, profiler.DeviceInfo{}, fmt.Errorf("worker stopped before it said hello: %s", w.lastWords())
		}
		return nil, profiler.DeviceInfo{}, fmt.Errorf("%w: %s", errExitedEarly, w.lastWords())
	case <-time.After(120 * time.Second):
		w.kill()
		return nil, profiler.DeviceInfo{}, fmt.Errorf("worker did not say hello within 120 s: %s", w.lastWords())
	case <-ctx.Done(): // ctrl-C: a GPU worker's start (cuInit, calibration) is not waited for
		w.kill()
		return nil, profiler.DeviceInfo{}, stopped(ctx)
	}
}

func (w *worker) kill() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	if w.cmd.Process != nil {
		_ = w.cmd.Process.Kill()
	}
	_ = w.cmd.Wait()
}

func (w *worker) lastWords() string {
	s := strings.TrimSpace(lastLines(w.stderr.String(), 8))
	state := ""
	if w.cmd.ProcessState != nil {
		state = w.cmd.ProcessState.String()
	}
	if line, ok := OutOfMemory(s); ok {
		// A Go program out of memory prints a goroutine dump after its
		// fatal line; the dump's last frames say nothing useful.
		msg := "out of memory (" + line + ")"
		if state != "" {
			msg = state + "; " + msg
		}
		return msg + ": the spec needs more host memory than there was; reduce the dims"
	}
	if w.byWatchdog && strings.Contains(state, "signal: killed") {
		state = "" // the caller says it was the watchdog
	} else if strings.Contains(state, "signal: killed") && s == "" {
		state += " (by the system's out-of-memory killer, or by hand)"
	}
	switch {
	case s == "" && state == "":
		return "(no output)"
	case s == "":
		return state + ", no output"
	case state == "":
		return s
	}
	return state + "; last words: " + s
}

// StartupSeconds is the time the pool's workers took to start, all of
// them: the first, and each fresh one after a crash.
func (p *WorkerPool) StartupSeconds() float64 {
	p.tmu.Lock()
	defer p.tmu.Unlock()
	return p.startup.Seconds()
}

// Opened is when the pool started its first worker.
func (p *WorkerPool) Opened() time.Time {
	p.tmu.Lock()
	defer p.tmu.Unlock()
	return p.opened
}

// Device is the worker's device: the zero DeviceInfo while the first
// worker starts (see StartWorkerPool).
func (p *WorkerPool) Device() profiler.DeviceInfo {
	select {
	case <-p.ready:
		return p.dev
	default:
		return profiler.DeviceInfo{}
	}
}

// Run sends one spec to the worker and waits for its result, the worker's
// death (crashed) or the watchdog (timeout). A dead worker is replaced for
// the next spec.
func (p *WorkerPool) Run(ctx context.Context, s profiler.Spec, opt profiler.Options, progress func(profiler.Progress)) profiler.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := time.Now()
	fail := func(st profiler.Status, msg string) profiler.Result {
		return profiler.Result{Time: start.UTC(), Spec: s, Backend: p.dev.Backend, Device: p.dev.Name, Status: st, Error: msg, WallSeconds: time.Since(start).Seconds()}
	}
	if _, err := profiler.Lookup(s.Kernel); err != nil {
		// The session's registry decides what exists: a worker may still
		// hold a user kernel under a name its manifest has since dropped.
		return fail(profiler.StatusInvalid, err.Error())
	}
	if p.w != nil && !slices.Equal(p.w.argv, p.argv()) {
		// The command line changed since the worker started (a user kernel
		// loaded since, e.g. by a sweep file opened in the interactive
		// session, is passed as --kernel PATH): a fresh worker loads it.
		p.w.kill()
		p.w = nil
	}
	if p.w == nil {
		w, _, err := p.start(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return fail(profiler.StatusCancelled, CancelReason(ctx))
		case errors.Is(err, context.Canceled): // the pool's starts ended (closed)
			return fail(profiler.StatusCancelled, err.Error())
		case err != nil:
			return fail(profiler.StatusCrashed, "could not start a fresh worker: "+err.Error())
		}
		p.w = w
	}
	w := p.w
	req, _ := json.Marshal(workerRequest{Spec: s, Options: opt, Version: profiler.FamilyVersion(s.Kernel)})
	if _, err := w.stdin.Write(append(req, '\n')); err != nil {
		p.w = nil
		w.kill()
		return fail(profiler.StatusCrashed, "worker is gone: "+w.lastWords())
	}
	timeout := opt.WatchdogTimeout()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var at workerPhase // what the worker said it was doing, for the watchdog's message
	for {
		select {
		case m := <-w.lines:
			switch m.Type {
			case "progress":
				if m.Progress != nil {
					at.update(*m.Progress)
				}
				if progress != nil && m.Progress != nil {
					progress(*m.Progress)
				}
			case "result":
				return withRoundTrip(*m.Result, start)
			case "fatal":
				p.w = nil
				w.kill()
				return fail(profiler.StatusCrashed, m.Error)
			}
		case <-w.done:
			// Drain anything said just before the end.
		drain:
			for {
				select {
				case m := <-w.lines:
					if m.Type == "result" {
						return *m.Result
					}
				default:
					break drain
				}
			}
			p.w = nil
			w.kill()
			return fail(profiler.StatusCrashed, "worker died: "+w.lastWords())
		case <-timer.C:
			p.w = nil
			w.byWatchdog = true
			w.kill()
			return fail(profiler.StatusTimeout, fmt.Sprintf("no result after %s (watchdog)%s; worker killed by mltop; %s; if the spec is only slow, raise --timeout (timeout: in a sweep file) above settle + warm-up + time limit", timeout.Round(time.Millisecond), at.describe(), w.lastWords()))
		case <-ctx.Done():
			// The only way to stop a kernel mid-flight is to end its process.
			p.w = nil
			w.kill()
			return fail(profiler.StatusCancelled, CancelReason(ctx))
		}
	}
}

// Ensure starts a fresh worker when the last one died, and says why it
// could not. A multi-device sweep calls it before handing the pool a spec,
// so a device whose workers no longer start is told apart from a spec that
// crashes its worker.
func (p *WorkerPool) Ensure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w != nil {
		return nil
	}
	w, _, err := p.start(context.Background())
	if err != nil {
		return err
	}
	p.w = w
	return nil
}

// Prefetch asks the worker to start preparing j (compile, inputs) while it
// measures the current spec. A dead or missing worker is simply not asked.
func (p *WorkerPool) Prefetch(j profiler.Job) {
	s := j.Spec
	p.mu.Lock()
	w := p.w
	p.mu.Unlock()
	if w == nil {
		return
	}
	req, _ := json.Marshal(workerRequest{Prefetch: true, Spec: s, Options: j.Options, Version: profiler.FamilyVersion(s.Kernel)})
	_, _ = w.stdin.Write(append(req, '\n'))
}

// Close stops the worker at once. The parent has every result already;
// an idle worker left to end on its own would first release its GPU
// context, up to a second with several workers at once, which a sweep's
// end should not wait for: nor does Close wait for the kill to complete
// (a process's exit unmaps its GPU memory first, which takes as long).
// Killed, it starts no new write; a directory it shared is removed after
// Close with a retry for the one write a kill can catch in flight.
func (p *WorkerPool) Close() error {
	p.closeStarts(errClosed) // a worker still starting is killed, no other starts
	select {
	case <-p.ready:
	default: // still starting: closed once the start is over, without waiting here
		go func() {
			<-p.ready
			p.Close()
		}()
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w != nil {
		w := p.w
		p.w = nil
		_ = w.stdin.Close()
		select {
		case <-w.quit:
		default:
			close(w.quit)
		}
		if w.cmd.Process != nil {
			_ = w.cmd.Process.Kill()
		}
		go func() {
			<-w.done // every read of its stdout is over before Wait closes it
			_ = w.cmd.Wait()
		}()
	}
	return nil
}

// tailBuffer keeps the last max bytes written (the worker's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// workerPhase follows a spec's progress messages, so that the watchdog
// says where the time went: a slow ref.py and a hung kernel call for
// different fixes.
type workerPhase struct {
	phase   string
	since   time.Time
	samples int
}

func (w *workerPhase) update(p profiler.Progress) {
	if p.Phase != w.phase {
		w.phase, w.since = p.Phase, time.Now()
	}
	w.samples = p.Samples
}

// phaseWork is what a worker does in each phase it reports.
var phaseWork = map[string]string{
	"plan":    "planning the spec",
	"compile": "compiling and loading the kernel",
	"verify":  "allocating, filling and uploading inputs, the kernel's first runs, the reference (a ref.py included) and the check",
	"warmup":  "warming up",
	"measure": "sampling",
}

// describe is ", the last S in its PHASE phase (what it does there)", or ""
// before the worker said anything.
func (w *workerPhase) describe() string {
	if w.phase == "" {
		return ""
	}
	work := phaseWork[w.phase]
	if w.phase == "measure" {
		work = fmt.Sprintf("sampling: %d samples taken", w.samples)
	}
	if work == "" {
		return fmt.Sprintf(", the last %s in its %s phase", time.Since(w.since).Round(100*time.Millisecond), w.phase)
	}
	return fmt.Sprintf(", the last %s in its %s phase (%s)", time.Since(w.since).Round(100*time.Millisecond), w.phase, work)
}
