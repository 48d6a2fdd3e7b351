// Package shaders embeds the kernel sources so the mltop binary is self-contained.
package shaders

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed metal cuda
var files embed.FS

// Source returns the text of shaders/<dir>/<name><ext>, e.g.
// Source("cuda", "attn_fwd", ".cu"). Headers are included by the backends'
// compilers through Header.
func Source(dir, name, ext string) (string, error) {
	b, err := files.ReadFile(dir + "/" + name + ext)
	if err != nil {
		return "", fmt.Errorf("no %s kernel source %q (looked for shaders/%s/%s%s): %w", dir, name, dir, name, ext, err)
	}
	return string(b), nil
}

// Headers returns every header file (.h, .cuh) in dir by file name, for
// compilers that take headers by name (NVRTC) or for textual inclusion.
func Headers(dir string) (map[string]string, error) {
	out := map[string]string{}
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".h") || strings.HasSuffix(e.Name(), ".cuh") {
			b, err := files.ReadFile(dir + "/" + e.Name())
			if err != nil {
				return nil, err
			}
			out[e.Name()] = string(b)
		}
	}
	return out, nil
}

// List returns the source names (without extension) in dir.
func List(dir, ext string) []string {
	var out []string
	entries, _ := fs.ReadDir(files, dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ext) {
			out = append(out, strings.TrimSuffix(e.Name(), ext))
		}
	}
	return out
}
