package user

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// A failed compile whose errors all lie in the toolkit's headers (or in a
// stub mltop serves) names the source's #include lines that bring them in,
// following the headers' own #includes (quoted ones beside the header,
// `..` included); an error in the source's own files, or in the entry's
// name map only, names none.
func TestIncludesBehindErrors(t *testing.T) {
	tk := t.TempDir()
	for name, text := range map[string]string{
		"lib/top.h":            "#pragma once\n#include \"detail/mid.h\"\n",
		"lib/detail/mid.h":     "#pragma once\n#  include \"../util/leaf.h\"\n",
		"lib/util/leaf.h":      "#pragma once\n",
		"other/plain.h":        "#pragma once\n",
		"cuda/std/type_traits": "#pragma once\n",
		"cuda_fp16.h":          "", "cuda_bf16.h": "",
	} {
		p := filepath.Join(tk, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := toolkitIncludeDirs
	toolkitIncludeDirs = func() []string { return []string{tk} }
	t.Cleanup(func() { toolkitIncludeDirs = old })

	src := "#include <other/plain.h>\n#include \"helper.cuh\"\n" + rewriteKernel
	path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("behind"), "k.cu": src,
		"helper.cuh": "#pragma once\n#include <lib/top.h>\n#include <torch/extension.h>\n"})
	_, f := preparedProgram(t, path, profiler.F32)
	leaf := filepath.Join(tk, "lib/detail/../util/leaf.h")
	for _, c := range []struct {
		name, log string
		want      []string
	}{
		{"in a header's header's header", leaf + ":1: error: no\n" + leaf + ":2: catastrophic error: no\n", []string{"helper.cuh:2: #include <lib/top.h>"}},
		{"in two headers and a stub's header", filepath.Join(tk, "other/plain.h") + ":1: error: no\ntype_traits:3: error: no\n" + leaf + ":1: error: no\n",
			[]string{"k.cu:1: #include <other/plain.h>", "helper.cuh:3: #include <torch/extension.h>", "helper.cuh:2: #include <lib/top.h>"}},
		{"one in the source's file too", leaf + ":1: error: no\n" + filepath.Join(filepath.Dir(path), "k.cu") + ":3: error: no\n", nil},
		{"the name map only", "__nv_name_map:2: error: no\n", nil},
		{"warnings only", leaf + ":1: warning #177-D: unused\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := f.IncludesBehindErrors(c.log); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
