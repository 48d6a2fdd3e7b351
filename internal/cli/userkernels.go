package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/lint"
	"github.com/mltop/mltop/profiler/sweep"
)

// session is one call of Main: where its output goes, the flags given on
// its command line, and the user kernels it loaded.
type session struct {
	stdout, stderr io.Writer
	given          map[string]bool // flags given explicitly (command.call sets it)
	// kernels are the manifests this call registered (--kernel, a kernel
	// argument that is a path, a sweep file's kernel: ./path): its worker
	// subprocesses are started with them (mltop worker --kernel PATH …).
	kernels *manifestList
}

// manifestList is a growing set of absolute manifest paths, safe to read
// while a command adds to it (the interactive session loads sweep files
// while its worker runs).
type manifestList struct {
	mu    sync.Mutex
	paths []string
}

// add records path (made absolute, once).
func (m *manifestList) add(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.paths, abs) {
		m.paths = append(m.paths, abs)
	}
}

// list is a copy of the paths, in the order they were added.
func (m *manifestList) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.paths)
}

// kernelPaths is the repeatable --kernel PATH flag: a kernel.yaml or a
// folder of them, added to the families of this run (and of its workers).
type kernelPaths []string

func (k *kernelPaths) String() string { return "" }

func (k *kernelPaths) Set(v string) error {
	*k = append(*k, v)
	return nil
}

// loadUserKernels registers the manifests the paths name and records them
// for the session's `mltop worker` subprocesses.
func (s *session) loadUserKernels(paths []string) error {
	for _, p := range paths {
		if _, err := user.Register(p); err != nil {
			return badInput("--kernel %s: %v", p, err)
		}
		s.kernels.add(p)
	}
	return nil
}

// loadUserKernelsReporting registers the manifests of paths that load and
// returns the check results of those that do not (mltop list, the
// interactive session): one broken manifest in a folder does not hide the
// others.
func (s *session) loadUserKernelsReporting(paths []string) []lint.Result {
	var broken []lint.Result
	for _, p := range paths {
		for _, r := range lint.Check(p, lint.Options{Static: true}).Manifests {
			if !r.Broken() {
				if err := user.Install(r.Family); err != nil {
					r.Findings = append(r.Findings, lint.Finding{Level: lint.Error, Step: lint.StepLoad, File: r.Manifest, Msg: err.Error()})
				} else {
					s.kernels.add(r.Manifest)
					continue
				}
			}
			broken = append(broken, r)
		}
	}
	return broken
}

// writeBroken prints the errors of manifests that do not load.
func writeBroken(w io.Writer, broken []lint.Result) {
	for _, r := range broken {
		fmt.Fprintf(w, "%s does not load:\n", r.Manifest)
		for _, f := range r.Findings {
			if f.Level == lint.Error {
				fmt.Fprintf(w, "  %s\n", f)
			}
		}
	}
}

// resolveKernelArg turns a kernel argument that is a path (./dir/kernel.yaml
// or ./dir) into the name of the family it defines, registering it.
func (s *session) resolveKernelArg(arg string) (string, error) {
	if !user.IsPath(arg) {
		return arg, nil
	}
	fams, err := user.Register(arg)
	if err != nil {
		return "", badInput("%v", err)
	}
	if len(fams) != 1 {
		return "", badInput("%s holds %d kernels: name one kernel.yaml", arg, len(fams))
	}
	s.kernels.add(arg)
	return fams[0].Name(), nil
}

// sweepOptions lets sweep files name user kernels by path (`kernel:
// ./softmax/kernel.yaml`, relative to the sweep file): they are registered
// here and passed to workers like --kernel's.
func (s *session) sweepOptions() sweep.Options {
	return sweep.Options{ResolveKernel: s.resolveSweepKernel}
}

func (s *session) resolveSweepKernel(path string) (string, error) {
	fams, err := user.Register(path)
	if err != nil {
		return "", err
	}
	if len(fams) != 1 {
		return "", fmt.Errorf("the folder holds %d kernels: name one kernel.yaml", len(fams))
	}
	s.kernels.add(path)
	return fams[0].Name(), nil
}

// workerArgv is the command line of a worker subprocess for backend: this
// binary's `worker --backend B`, then --kernel PATH for each manifest the
// session has loaded by the time the worker starts.
func (s *session) workerArgv(self, backend string) func() []string {
	return func() []string {
		argv := []string{self, "worker", "--backend", backend}
		for _, p := range s.kernels.list() {
			argv = append(argv, "--kernel", p)
		}
		return argv
	}
}
