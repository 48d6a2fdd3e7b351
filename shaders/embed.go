// Package shaders embeds the kernel sources so the mltop binary is
// self-contained. Each family's sources live in shaders/<family>/ (the
// family's <family>.cu and <family>.metal, plus any other programs its plans
// name); shared headers live in shaders/common/; calibration and test
// kernels have folders of their own. A source is found by its file name
// (Program.Source + extension) wherever it lives, so file names are unique
// across the tree (a test holds that).
package shaders

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed */*.cu */*.metal */*.cuh */*.h
var files embed.FS

// CommonDir holds the headers every kernel may include.
const CommonDir = "common"

var (
	indexOnce sync.Once
	index     map[string][]string // file name → paths holding it
)

func buildIndex() {
	index = map[string][]string{}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			index[d.Name()] = append(index[d.Name()], p)
		}
		return nil
	})
}

// Path is where the source name+ext lives (e.g. "attn_bwd/attn_bwd_dq.cu"),
// or an error when no folder, or more than one, holds it.
func Path(name, ext string) (string, error) {
	indexOnce.Do(buildIndex)
	ps := index[name+ext]
	switch len(ps) {
	case 0:
		return "", fmt.Errorf("no kernel source %s%s in any folder of shaders/: add shaders/<family>/%s%s", name, ext, name, ext)
	case 1:
		return ps[0], nil
	}
	return "", fmt.Errorf("kernel source %s%s is in several folders (%s): file names must be unique under shaders/", name, ext, strings.Join(ps, ", "))
}

// Source returns the text of the kernel source name+ext for backend
// ("cuda" or "metal"), e.g. Source("cuda", "attn_fwd", ".cu") reads
// shaders/attn_fwd/attn_fwd.cu. Headers are included by the backends'
// compilers through Headers.
func Source(backend, name, ext string) (string, error) {
	p, err := Path(name, ext)
	if err != nil {
		return "", fmt.Errorf("%s backend: %w", backend, err)
	}
	b, err := files.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("%s backend: reading shaders/%s: %w", backend, p, err)
	}
	return string(b), nil
}

// headerExt is the header extension each backend's compiler includes.
var headerExt = map[string]string{"cuda": ".cuh", "metal": ".h"}

// Headers returns the backend's headers in shaders/common by file name, for
// compilers that take headers by name (NVRTC) or for textual inclusion.
func Headers(backend string) (map[string]string, error) {
	ext, ok := headerExt[backend]
	if !ok {
		return nil, fmt.Errorf("no headers for backend %q: use cuda or metal", backend)
	}
	out := map[string]string{}
	entries, err := fs.ReadDir(files, CommonDir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			b, err := files.ReadFile(path.Join(CommonDir, e.Name()))
			if err != nil {
				return nil, err
			}
			out[e.Name()] = string(b)
		}
	}
	return out, nil
}

// List returns the names (without extension) of every source with ext,
// outside shaders/common, sorted. backend is kept for callers that name it.
func List(backend, ext string) []string {
	indexOnce.Do(buildIndex)
	var out []string
	for n, ps := range index {
		if strings.HasSuffix(n, ext) && !slices.ContainsFunc(ps, func(p string) bool { return path.Dir(p) == CommonDir }) {
			out = append(out, strings.TrimSuffix(n, ext))
		}
	}
	slices.Sort(out)
	return out
}

// Dirs lists the folders under shaders/ (families, common, calibrate, …).
func Dirs() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}
