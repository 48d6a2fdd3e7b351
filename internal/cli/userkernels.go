package cli

import (
	"fmt"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler/sweep"
)

// kernelPaths is the repeatable --kernel PATH flag: a kernel.yaml or a
// folder of them, added to the families of this run (and of its workers).
type kernelPaths []string

func (k *kernelPaths) String() string { return "" }

func (k *kernelPaths) Set(v string) error {
	*k = append(*k, v)
	return nil
}

// loadUserKernels registers the manifests the paths name and records them
// for `mltop worker` subprocesses (they inherit the environment).
func loadUserKernels(paths []string) error {
	for _, p := range paths {
		if _, err := user.Register(p); err != nil {
			return badInput("--kernel %s: %v", p, err)
		}
		user.AddToEnv(p)
	}
	return nil
}

// resolveKernelArg turns a kernel argument that is a path (./dir/kernel.yaml
// or ./dir) into the name of the family it defines, registering it.
func resolveKernelArg(arg string) (string, error) {
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
	user.AddToEnv(arg)
	return fams[0].Name(), nil
}

// registerEnvKernels loads the manifests a parent process passed down.
func registerEnvKernels() error {
	if err := user.RegisterFromEnv(); err != nil {
		return badInput("%s: %v", user.PathsEnv, err)
	}
	return nil
}

// sweepOptions lets sweep files name user kernels by path (`kernel:
// ./softmax/kernel.yaml`, relative to the sweep file): they are registered
// here and passed to workers like --kernel's.
func sweepOptions() sweep.Options {
	return sweep.Options{ResolveKernel: resolveSweepKernel}
}

func resolveSweepKernel(path string) (string, error) {
	fams, err := user.Register(path)
	if err != nil {
		return "", err
	}
	if len(fams) != 1 {
		return "", fmt.Errorf("the folder holds %d kernels: name one kernel.yaml", len(fams))
	}
	user.AddToEnv(path)
	return fams[0].Name(), nil
}
