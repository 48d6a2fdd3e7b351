package user

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mltop/mltop/profiler"
)

// ManifestName is the file a folder's kernel is described in.
const ManifestName = "kernel.yaml"

// IsPath says whether a kernel argument names a manifest (or a folder
// holding one) rather than a family: it is not a family's name, and it
// exists, ends in .yaml/.yml or has a path separator.
func IsPath(arg string) bool {
	if _, err := profiler.Lookup(arg); err == nil {
		return false
	}
	if _, err := os.Stat(arg); err == nil {
		return true
	}
	return strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator)
}

// Manifests lists the manifests a path names: the file itself, or every
// kernel.yaml under a folder (sorted).
func Manifests(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read it: %v: give a kernel.yaml or a folder holding kernel.yaml files", unwrapPath(err))}
	}
	if !st.IsDir() {
		if err := notASource(path); err != nil {
			return nil, err
		}
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == ManifestName {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if len(out) == 0 {
		return nil, &Error{File: path, Msg: "the folder holds no " + ManifestName + ": write one (mltop new NAME --from kernel.cu --entry fn)"}
	}
	slices.Sort(out)
	return out, nil
}

// sourceKinds are the source files people give where a manifest is due,
// by extension, with what they hold.
var sourceKinds = map[string]string{
	".cu": "CUDA source", ".cuh": "CUDA header", ".metal": "Metal source",
	".h": "C/C++ header", ".hpp": "C++ header", ".cpp": "C++ source", ".cc": "C++ source",
}

// notASource is the error for a kernel source given in place of its
// manifest: which manifest to give, or how to write one.
func notASource(path string) error {
	kind, ok := sourceKinds[strings.ToLower(filepath.Ext(path))]
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("this is a %s, not a manifest: give its %s", kind, ManifestName)
	if beside := filepath.Join(filepath.Dir(path), ManifestName); fileExists(beside) {
		msg += fmt.Sprintf(" (%s is beside it)", beside)
	} else {
		name := strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		if !ValidName(name) { // 4_kernel_1D_blocktiling.cuh: a name starts with a letter
			name = "k_" + name
		}
		if f, err := profiler.Lookup(name); err == nil && !isUser(f) { // transpose.cu: new refuses a built-in's name
			name += "_mine"
		}
		msg += fmt.Sprintf(", or write one with `mltop new %s --from %s`", name, path)
	}
	return &Error{File: path, Msg: msg}
}

// isUser says whether f is a user kernel (not a built-in family).
func isUser(f profiler.Family) bool { _, ok := f.(*Family); return ok }

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]string{} // family name → absolute manifest path
)

// Register loads the manifests a path names and registers their families.
// A name already taken by a built-in family or by another manifest is an
// error; the same manifest loaded twice replaces itself (reload).
func Register(path string) ([]*Family, error) {
	ms, err := Manifests(path)
	if err != nil {
		return nil, err
	}
	var out []*Family
	for _, m := range ms {
		f, err := Load(m)
		if err != nil {
			return nil, err
		}
		if err := Install(f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// Install registers f, replacing an earlier load of the same manifest. When
// the manifest now gives its kernel another name, the old name is
// unregistered in the same step, so exactly the new name is registered. A
// name that a built-in family or another manifest holds is refused, and
// the kernel stays registered as it was.
func Install(f *Family) error {
	abs, err := filepath.Abs(f.path)
	if err != nil {
		abs = f.path
	}
	loadedMu.Lock()
	defer loadedMu.Unlock()
	prevName := ""
	for name, p := range loaded {
		if p == abs {
			prevName = name
		}
	}
	keeps := ""
	if prevName != "" && prevName != f.Name() {
		keeps = fmt.Sprintf(" (the kernel stays registered as %s until the manifest names a free one)", prevName)
	}
	if prev, ok := loaded[f.Name()]; ok && prev != abs {
		return f.nameErr("%s is already the name of the kernel in %s: give each manifest its own name%s", f.Name(), prev, keeps)
	}
	if old, err := profiler.Lookup(f.Name()); err == nil {
		if _, isUser := old.(*Family); !isUser {
			return f.nameErr("%s is a built-in family: pick another name%s", f.Name(), keeps)
		}
	}
	if prevName == "" || prevName == f.Name() {
		loaded[f.Name()] = abs
		profiler.Replace(f)
		return nil
	}
	delete(loaded, prevName)
	loaded[f.Name()] = abs
	profiler.ReplaceNamed(prevName, f)
	return nil
}

// nameErr is an error about the manifest's name, at its line where known.
func (f *Family) nameErr(format string, a ...any) error {
	if f.doc != nil {
		return f.doc.err("$.name", "name", format, a...)
	}
	return &Error{File: f.path, Field: "name", Msg: fmt.Sprintf(format, a...)}
}
