package scaffold

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// segment says that the joined text's line start is line `line` of file
// (relative to the main file's folder; "" for the main file).
type segment struct {
	start int
	file  string
	line  int
}

// sourceLines maps lines of the text the scaffold reads (the main file
// with its local headers pasted at their #include lines) back to files.
type sourceLines struct{ segs []segment }

// at names line n of the joined text for a comment: "line 38", or
// "line 5 of kernels/scale.cuh" when a header holds it.
func (s sourceLines) at(n int) string {
	seg := segment{start: 1, line: 1}
	for _, g := range s.segs {
		if g.start <= n {
			seg = g
		}
	}
	l := seg.line + n - seg.start
	if seg.file == "" {
		return fmt.Sprintf("line %d", l)
	}
	return fmt.Sprintf("line %d of %s", l, seg.file)
}

// localIncludes are the one-line `#include "x"` directives of code that
// the compiler reads, by line: an include under `#if 0` or in a comment is
// not one. The host pass counts (csrc.HostMacros): a launcher's header
// included under `#ifndef __CUDA_ARCH__` is read for its launches.
func localIncludes(code string) map[int]string {
	out := map[int]string{}
	for _, d := range csrc.ScanIn(code, csrc.HostMacros()).Directives {
		if d.Include != "" && !d.System && !d.Dead && d.Line == d.EndLine {
			out[d.Line] = d.Include
		}
	}
	return out
}

// withLocalHeaders pastes the local headers the source includes (#include
// "x", found beside the including file; each once, as #pragma once or
// guards would) in place of their #include lines, so that kernels,
// typedefs and #defines in headers are read as the compiler reads them.
// read nil: the source alone.
func withLocalHeaders(path, src string, read func(string) ([]byte, error)) (string, sourceLines) {
	code, lines, _ := withHeaders(path, src, read)
	return code, lines
}

// maxRootUp is how many folders above the source's own withHeaders looks
// for a tree's root: Kaldi's src/cudamatrix/cu-kernels.cu includes
// "cudamatrix/cu-kernels-ansi.h", a path from src/.
const maxRootUp = 4

// withHeaders is withLocalHeaders, which also finds a header that is not
// beside the including file under a folder above the source's (Kaldi,
// FasterTransformer and TensorRT-LLM include by paths from their tree's
// root), as a compiler given that folder with -I does: roots are those
// folders, for the manifest's include_dirs.
func withHeaders(path, src string, read func(string) ([]byte, error)) (string, sourceLines, []string) {
	var b strings.Builder
	var lines sourceLines
	var roots []string
	if read == nil {
		return src, lines, nil
	}
	find := func(file, inc string) (string, []byte, bool) {
		hp := filepath.Clean(filepath.Join(filepath.Dir(file), inc))
		if body, err := read(hp); err == nil {
			return hp, body, true
		}
		for _, r := range roots {
			hp := filepath.Clean(filepath.Join(r, inc))
			if body, err := read(hp); err == nil {
				return hp, body, true
			}
		}
		if filepath.IsAbs(inc) || strings.HasPrefix(inc, ".") {
			return "", nil, false
		}
		dir := filepath.Dir(filepath.Clean(path))
		if filepath.Clean(file) != filepath.Clean(path) {
			// a header that includes by a path from the source's own
			// folder (MLX's random.metal includes
			// "mlx/backend/metal/kernels/utils.h", which includes
			// "mlx/backend/metal/kernels/bf16.h"): that folder is a root
			if body, err := read(filepath.Join(dir, inc)); err == nil {
				roots = append(roots, dir)
				return filepath.Join(dir, inc), body, true
			}
		}
		for range maxRootUp {
			up := filepath.Dir(dir)
			if up == dir {
				break
			}
			dir = up
			hp := filepath.Join(dir, inc)
			if body, err := read(hp); err == nil {
				roots = append(roots, dir)
				return hp, body, true
			}
		}
		return "", nil, false
	}
	seen := map[string]bool{filepath.Clean(path): true}
	cur := 1
	var paste func(file, rel, code string, depth int)
	paste = func(file, rel, code string, depth int) {
		lines.segs = append(lines.segs, segment{start: cur, file: rel, line: 1})
		includes := localIncludes(code)
		for i, l := range strings.Split(strings.TrimSuffix(code, "\n"), "\n") {
			if inc, ok := includes[i+1]; ok && depth < 16 {
				if hp, body, found := find(file, inc); found && !seen[hp] {
					seen[hp] = true
					hrel, err := filepath.Rel(filepath.Dir(path), hp)
					if err != nil {
						hrel = hp
					}
					paste(hp, filepath.ToSlash(hrel), string(body), depth+1)
					lines.segs = append(lines.segs, segment{start: cur, file: rel, line: i + 2})
					continue
				}
			}
			b.WriteString(l)
			b.WriteString("\n")
			cur++
		}
	}
	paste(path, "", src, 0)
	return b.String(), lines, roots
}
