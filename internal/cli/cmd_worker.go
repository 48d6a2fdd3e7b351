package cli

import (
	"context"
	"flag"
	"os"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/run"
)

// The worker is hidden: its parent (session.openExecutor, openDevices)
// starts it; nobody types it.
const (
	workerSummary = "run specs for a parent mltop over JSON lines on stdin/stdout"
	workerHelp    = `  mltop worker --backend B [--kernel PATH]...
                                        (started by mltop) run the parent's specs in a subprocess;
                                        --kernel: the user kernels the parent loaded
`
)

func workerCommand() command {
	c := newCommand("worker", workerSummary, workerHelp, (*workerArgs).declare, runWorker)
	c.hidden = true
	c.parse = func(fs *flag.FlagSet, args []string) ([]string, error) {
		if err := fs.Parse(args); err != nil {
			return nil, badInput("worker: %v", err)
		}
		return fs.Args(), nil
	}
	return c
}

type workerArgs struct {
	backend string
	kernels kernelPaths
}

func (a *workerArgs) declare(fs *flag.FlagSet) {
	fs.StringVar(&a.backend, "backend", "cpu", "")
	fs.Var(&a.kernels, "kernel", "")
}

// runWorker is the hidden `mltop worker --backend B [--kernel PATH]...`:
// JSON lines on stdin/stdout. Everything else the process prints goes to
// stderr.
func runWorker(_ context.Context, s *session, a *workerArgs, _ []string) error {
	if err := a.register(); err != nil {
		return badInput("worker: --kernel: %v", err)
	}
	protocol := os.Stdout
	os.Stdout = os.Stderr // stray prints must not corrupt the protocol
	// A request for a user kernel the parent reloaded (another version)
	// registers the manifests again first: the worker runs the new kernel.
	err := run.ServeWorkerReload(os.Stdin, protocol, func() (profiler.Executor, error) {
		return openRunner(a.backend, os.Stderr, true)
	}, a.register)
	if err != nil {
		return &exitError{code: exitFailed, msg: "worker: " + err.Error()}
	}
	return nil
}

// register loads the manifests the parent passed (--kernel), again on
// each reload.
func (a *workerArgs) register() error {
	for _, p := range a.kernels {
		if _, err := user.Register(p); err != nil {
			return err
		}
	}
	return nil
}
