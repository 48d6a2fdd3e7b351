package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

func TestParseCUBVersion(t *testing.T) {
	for text, want := range map[string]string{
		"#pragma once\n#define CUB_VERSION 101702\n":                       "1.17.2",
		"#define CUB_VERSION 300300 // macro expansion with ## needs it\n": "3.3.0",
		"#  define CUB_VERSION 200800\n":                                   "2.8.0",
		"#define CUB_VERSION_X 1\n":                                        "",
		"#define CUB_VERSION CCCL_VERSION\n":                               "",
	} {
		got, ok := parseCUBVersion(text)
		if got != want || ok != (want != "") {
			t.Errorf("parseCUBVersion(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
}

// findCUB reads the version.cuh NVRTC would: an in-memory header first,
// then the include directories in their order.
func TestFindCUB(t *testing.T) {
	files := map[string]string{
		filepath.Join("/b", "cub", "version.cuh"): "#define CUB_VERSION 101702\n",
		filepath.Join("/c", "cub", "version.cuh"): "#define CUB_VERSION 300300\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	opts := []string{"--gpu-architecture=sm_90", "--include-path=/a", "--include-path=/b", "--include-path=/c"}
	if got := findCUB(opts, nil, read); got.Version != "1.17.2" || got.File != filepath.Join("/b", "cub", "version.cuh") {
		t.Errorf("the first directory with CUB: %+v", got)
	}
	if got := findCUB(opts, map[string]string{"cub/version.cuh": "#define CUB_VERSION 200200\n"}, read); got.Version != "2.2.0" {
		t.Errorf("an in-memory header comes first: %+v", got)
	}
	if got := findCUB(opts[:2], nil, read); got.File != "" {
		t.Errorf("no CUB: %+v", got)
	}
}

func TestCUBHint(t *testing.T) {
	cub1 := CUBFound{Version: "1.17.2", File: "/t/include/cub/version.cuh"}
	cub3 := CUBFound{Version: "3.3.0", File: "/t/cccl/cub/version.cuh"}
	for _, c := range []struct {
		name, log string
		cub       CUBFound
		want      []string // "" alone: no hint
	}{
		{"no CUB error", `k.cu:3: error: identifier "x" is undefined`, cub1, []string{""}},
		{"a warning naming cub", `k.cu:3: warning: cub::Sum is deprecated`, cub3, []string{""}},
		{"a member CUB lacks", `k.cu:3: error: namespace "cub" has no member "BlockLoad"`, cub1,
			[]string{"CUB 1.17.2 (/t/include/cub/version.cuh)", "GPU machine's CUB", "BlockLoad and WarpLoad, and the iterator headers"}},
		{"a member CCCL 3 removed", `k.cu:7: error: namespace "cub" has no member "Max"`, cub3,
			[]string{"CUB 3.3.0 (/t/cccl/cub/version.cuh)", "cub::Max", "cuda::maximum<>"}},
		{"a qualified name", `k.cu:9: error: no instance of overloaded function "cub::BlockReduce<float, 128>::Reduce" matches`, cub3, []string{"CUB 3.3.0"}},
		{"an error in CUB 1's header", "/t/include/cub/block/../iterator/../detail/device_synchronize.cuh:35: error: A function explicitly marked as a __host__ function is not allowed in JIT mode", cub1,
			[]string{"CUB 1.17.2", "reach host code NVRTC rejects"}},
		{"an error in CUB 3's header", "/t/cccl/cub/block/block_scan.cuh:120: error: expected a type specifier", cub3, []string{"CUB 3.3.0"}},
		{"no version.cuh", `k.cu:3: error: namespace "cub" has no member "Max"`, CUBFound{}, []string{"no cub/version.cuh", IncludeEnv}},
		{"unreadable version", `k.cu:3: error: namespace "cub" has no member "Max"`, CUBFound{File: "/x/cub/version.cuh"}, []string{"CUB_VERSION could not be read"}},
	} {
		got := cubHint(c.log, c.cub)
		if c.want[0] == "" {
			if got != "" {
				t.Errorf("%s: hint %q, want none", c.name, got)
			}
			continue
		}
		for _, w := range c.want {
			if !strings.HasPrefix(got, "hint: ") || !strings.Contains(got, w) || strings.Contains(got, "\n") {
				t.Errorf("%s: hint %q, want one line with %q", c.name, got, w)
			}
		}
		if c.cub.Version != "1.17.2" && strings.Contains(got, "BlockLoad") {
			t.Errorf("%s: the CUB 1 note with CUB 3: %q", c.name, got)
		}
	}
	// the hint keeps the error it is added to
	cause := errors.New("NVRTC_ERROR_COMPILATION")
	if err := withCUBHint(cause, `k.cu:3: error: namespace "cub" has no member "Max"`, nil, map[string]string{"cub/version.cuh": "#define CUB_VERSION 300300\n"}); !errors.Is(err, cause) || !strings.Contains(err.Error(), "CUB 3.3.0") {
		t.Errorf("withCUBHint: %v", err)
	}
}

// TestCUBHintWithNVRTC: a source naming a member no CUB has fails to
// compile, and the error ends with the hint naming the CUB of the
// include path.
func TestCUBHintWithNVRTC(t *testing.T) {
	p := profiler.Program{Source: "cubk", File: "cubk.cu", Entry: "k",
		Code: "#include <cub/block/block_reduce.cuh>\n__global__ void k(float* y) { y[0] = cub::NoSuchMember<float>()(y[0], y[1]); }\n"}
	found := findCUB(CompileOptions(p, DefaultCheckArch), nil, os.ReadFile)
	if found.Version == "" {
		t.Skip("no CUB on the include path")
	}
	r, err := CheckCompile(p, "")
	if r.Compiler == "" {
		t.Skip("no NVRTC here: ", err)
	}
	if err == nil || !strings.Contains(err.Error(), "\nhint: the errors name CUB, and the include path has CUB "+found.Version) {
		t.Fatalf("error %v, want it to end with the hint naming CUB %s", err, found.Version)
	}
}
