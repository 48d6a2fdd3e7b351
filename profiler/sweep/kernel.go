package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Options are what a sweep file's loader needs from the program beyond
// the file.
type Options struct {
	// ResolveKernel loads the user kernel that a `kernel:` path names (a
	// kernel.yaml, or a folder holding one), already joined to the sweep
	// file's folder, registers it, and returns its family's name. The
	// program sets it (main, with kernels/user), so that this package does
	// not depend on user kernels; nil refuses paths.
	ResolveKernel func(path string) (string, error)
}

// isKernelPath says whether a `kernel:` value names a manifest rather than
// a family: it is not a family's name, and it has a path separator, ends
// in .yaml/.yml, or exists beside the sweep file.
func isKernelPath(ref, dir string) bool {
	if _, err := profiler.Lookup(ref); err == nil || ref == "" {
		return false
	}
	if strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml") || strings.ContainsRune(ref, '/') || strings.ContainsRune(ref, filepath.Separator) {
		return true
	}
	_, err := os.Stat(filepath.Join(dir, ref))
	return err == nil
}

// resolveKernel turns a `kernel:` path into the family it defines; a name
// is returned as it is. The path is relative to the sweep file's folder.
func resolveKernel(file, ref string, o Options) (string, error) {
	dir := filepath.Dir(file)
	if !isKernelPath(ref, dir) {
		return ref, nil
	}
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, ref)
	}
	if o.ResolveKernel == nil {
		return "", fmt.Errorf("%s is a path to a user kernel, and this program does not load them here: name a built-in kernel (`mltop list`)", ref)
	}
	name, err := o.ResolveKernel(path)
	if err != nil {
		return "", fmt.Errorf("cannot load the user kernel %s (%s; paths are relative to the sweep file): %v", ref, path, err)
	}
	return name, nil
}
