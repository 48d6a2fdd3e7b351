package cuda

import (
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mltop/mltop/profiler"
)

// fakeFS is a file system of the given files (directories are implied by
// the files' parents), with symbolic links from one directory to another.
type fakeFS struct {
	files map[string]bool
	links map[string]string // dir → target dir
	// views: the views of system include folders made, by path, with the
	// names linked; viewErr: making one fails with it
	views   map[string][]string
	viewErr error
}

func newFakeFS(links map[string]string, files ...string) *fakeFS {
	f := &fakeFS{files: map[string]bool{}, links: links}
	for _, p := range files {
		f.files[p] = true
	}
	return f
}

// resolve follows a link in any prefix of p.
func (f *fakeFS) resolve(p string) string {
	for from, to := range f.links {
		if p == from || strings.HasPrefix(p, from+"/") {
			return to + strings.TrimPrefix(p, from)
		}
	}
	return p
}

func (f *fakeFS) isFile(p string) bool { return f.files[f.resolve(path.Clean(p))] }

func (f *fakeFS) isDir(p string) bool {
	p = f.resolve(path.Clean(p))
	for file := range f.files {
		if strings.HasPrefix(file, p+"/") {
			return true
		}
	}
	return false
}

func (f *fakeFS) dirs() []string {
	seen := map[string]bool{}
	for file := range f.files {
		for d := path.Dir(file); d != "/" && !seen[d]; d = path.Dir(d) {
			seen[d] = true
		}
	}
	for from := range f.links {
		seen[from] = true
	}
	return slices.Sorted(func(yield func(string) bool) {
		for d := range seen {
			if !yield(d) {
				return
			}
		}
	})
}

func (f *fakeFS) glob(pat string) ([]string, error) {
	var out []string
	for _, d := range f.dirs() {
		if ok, _ := path.Match(pat, d); ok {
			out = append(out, d)
		}
	}
	return out, nil
}

func (f *fakeFS) lookup(env map[string]string, nvcc, nvrtc string) includeLookup {
	return includeLookup{
		getenv: func(k string) string { return env[k] },
		lookPath: func(string) (string, error) {
			if nvcc == "" {
				return "", errors.New("not found")
			}
			return nvcc, nil
		},
		glob: f.glob,
		realPath: func(p string) (string, error) {
			return f.resolve(path.Clean(p)), nil
		},
		isDir:   f.isDir,
		isFile:  f.isFile,
		readDir: f.readDir,
		view: func(dir string, names []string) (string, error) {
			if f.viewErr != nil {
				return "", f.viewErr
			}
			v := "/cache/view" + dir
			if f.views == nil {
				f.views = map[string][]string{}
			}
			f.views[v] = names
			return v, nil
		},
		nvrtc: nvrtc,
	}
}

// readDir lists the names directly in dir.
func (f *fakeFS) readDir(dir string) ([]string, error) {
	dir = f.resolve(path.Clean(dir))
	seen := map[string]bool{}
	for _, d := range append(slices.Collect(maps.Keys(f.files)), f.dirs()...) {
		if rest, ok := strings.CutPrefix(d, dir+"/"); ok {
			seen[strings.Split(rest, "/")[0]] = true
		}
	}
	if len(seen) == 0 {
		return nil, errors.New("no such directory")
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

func TestFindIncludeDirs(t *testing.T) {
	cases := []struct {
		name         string
		fs           *fakeFS
		env          map[string]string
		nvcc, nvrtc  string
		want         []string
		wantSearched []string // "dir: result" for a few of the places
	}{
		{
			name: "CUDA 13 toolkit: cccl first, the /usr/local/cuda link deduplicated, versions newest first",
			fs: newFakeFS(map[string]string{"/usr/local/cuda": "/usr/local/cuda-13.0"},
				"/usr/local/cuda-13.0/include/cuda_fp16.h", "/usr/local/cuda-13.0/include/cccl/cub/cub.cuh",
				"/usr/local/cuda-12.9/include/cuda_runtime.h", "/usr/local/cuda-12.10/include/cuda_runtime.h"),
			want: []string{"/usr/local/cuda/include/cccl", "/usr/local/cuda/include", "/usr/local/cuda-12.10/include", "/usr/local/cuda-12.9/include"},
			wantSearched: []string{"/usr/local/cuda/include: used (+cccl)", "/usr/local/cuda-13.0/include: duplicate",
				"/opt/cuda/include: no such directory"},
		},
		{
			name: "the user's list first (any directory), then CUDA_HOME, CUDA_PATH, nvcc",
			fs: newFakeFS(nil, "/my/inc/a.cuh", "/home/u/cuda/include/cuda_fp16.h", "/win/cuda/include/cuda_runtime.h",
				"/opt/nv/bin/nvcc", "/opt/nv/include/cuda_runtime.h", "/usr/local/cuda/include/cuda_fp16.h"),
			env:          map[string]string{IncludeEnv: "/my/inc" + string(filepath.ListSeparator) + "/missing", "CUDA_HOME": "/home/u/cuda", "CUDA_PATH": "/win/cuda"},
			nvcc:         "/opt/nv/bin/nvcc",
			want:         []string{"/my/inc", "/home/u/cuda/include", "/win/cuda/include", "/opt/nv/include", "/usr/local/cuda/include"},
			wantSearched: []string{"/missing: no such directory"},
		},
		{
			name: "a folder without the toolkit's headers is skipped",
			fs:   newFakeFS(nil, "/home/u/cuda/include/other.h"),
			env:  map[string]string{"CUDA_HOME": "/home/u/cuda"},
			want: nil,
			wantSearched: []string{"/home/u/cuda/include: no cuda_fp16.h or cuda_runtime.h",
				"/usr/local/cuda/include: no such directory"},
		},
		{
			name: "pip wheels beside NVRTC: every nvidia/*/include holding the toolkit's headers or cub",
			fs: newFakeFS(nil, "/v/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
				"/v/lib/python3.12/site-packages/nvidia/cuda_nvrtc/include/nvrtc.h",
				"/v/lib/python3.12/site-packages/nvidia/cuda_runtime/include/cuda_fp16.h",
				"/v/lib/python3.12/site-packages/nvidia/cuda_cccl/include/cub/cub.cuh"),
			nvrtc: "/v/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12",
			want:  []string{"/v/lib/python3.12/site-packages/nvidia/cuda_cccl/include", "/v/lib/python3.12/site-packages/nvidia/cuda_runtime/include"},
		},
		{
			name: "the one-folder cu13 wheel",
			fs: newFakeFS(nil, "/s/nvidia/cu13/lib/libnvrtc.so.13", "/s/nvidia/cu13/include/cuda_bf16.h",
				"/s/nvidia/cu13/include/cuda_fp16.h", "/s/nvidia/cu13/include/cccl/cub/cub.cuh"),
			nvrtc: "/s/nvidia/cu13/lib/libnvrtc.so.13",
			want:  []string{"/s/nvidia/cu13/include/cccl", "/s/nvidia/cu13/include"},
		},
		{
			name:  "NVRTC in a toolkit's lib64: ../include",
			fs:    newFakeFS(nil, "/tk/lib64/libnvrtc.so.13", "/tk/include/cuda_fp16.h"),
			nvrtc: "/tk/lib64/libnvrtc.so.13",
			want:  []string{"/tk/include"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, searched := findIncludeDirs(c.fs.lookup(c.env, c.nvcc, c.nvrtc))
			if !slices.Equal(got, c.want) {
				t.Errorf("dirs = %q\nwant   %q", got, c.want)
			}
			var lines []string
			for _, s := range searched {
				lines = append(lines, s.Dir+": "+s.Result)
			}
			for _, w := range c.wantSearched {
				if !slices.Contains(lines, w) {
					t.Errorf("searched lacks %q: %q", w, lines)
				}
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	dirs := []string{"/usr/local/cuda-12.9/include", "/usr/local/cuda-13.0/include", "/usr/local/cuda-12.10/include", "/usr/local/cuda-12/include"}
	slices.SortFunc(dirs, func(a, b string) int { return compareVersions(b, a) })
	want := []string{"/usr/local/cuda-13.0/include", "/usr/local/cuda-12.10/include", "/usr/local/cuda-12.9/include", "/usr/local/cuda-12/include"}
	if !slices.Equal(dirs, want) {
		t.Fatalf("newest first: %q, want %q", dirs, want)
	}
}

func TestToolkitInfoReport(t *testing.T) {
	fs := newFakeFS(nil, "/usr/local/cuda/include/cuda_fp16.h", "/usr/local/cuda/include/cuda_bf16.h",
		"/usr/local/cuda/include/cccl/cub/cub.cuh")
	info := toolkitInfo(fs.lookup(nil, "", ""), "NVRTC 13.0 from /x/libnvrtc.so.13")
	for h, want := range map[string]bool{"cuda_fp16.h": true, "cuda_bf16.h": true, "cub/cub.cuh": true, "cooperative_groups.h": false} {
		if info.Has(h) != want {
			t.Errorf("Has(%q) = %v, want %v (%+v)", h, !want, want, info.Headers)
		}
	}
	s := info.String()
	for _, want := range []string{"NVRTC 13.0 from /x/libnvrtc.so.13", "cooperative_groups.h", "not found",
		"include path: /usr/local/cuda/include/cccl" + string(filepath.ListSeparator) + "/usr/local/cuda/include",
		"looked in /opt/cuda/include (default): no such directory"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
	empty := toolkitInfo(newFakeFS(nil).lookup(nil, "", ""), "none")
	if !strings.Contains(empty.String(), "none found (set "+IncludeEnv) {
		t.Errorf("no toolkit: %s", empty.String())
	}
}

// Toolkit runs on any machine, GPU or not, and never fails.
func TestToolkitRunsWithoutAGPU(t *testing.T) {
	info := Toolkit()
	if info.NVRTC == "" || len(info.Headers) != len(wellKnownHeaders) || len(info.Searched) == 0 {
		t.Fatalf("Toolkit() = %+v", info)
	}
	t.Log(info)
}

func TestCompileOptions(t *testing.T) {
	user := profiler.Program{Entry: "k", Code: "x", Macros: []profiler.Macro{{Name: "N", Value: "4"}}, IncludeDirs: []string{"/mine", "/tk/include/"}}
	got := compileOptions(user, "sm_90a", []string{"/tk/include", "/tk2"}, " -maxrregcount=64 ")
	want := []string{"--gpu-architecture=sm_90a", "-lineinfo", "--std=c++17", "-default-device", "-DN=4",
		"--include-path=/mine", "--include-path=/tk/include", "--include-path=/tk2", "-maxrregcount=64"}
	if !slices.Equal(got, want) {
		t.Errorf("user program:\n got %q\nwant %q", got, want)
	}
	// Built-in shaders compile as before: no include path.
	builtin := profiler.Program{Source: "softmax", Entry: "softmax", IncludeDirs: []string{"/ignored"}}
	for _, o := range compileOptions(builtin, "sm_80", []string{"/tk"}, "") {
		if strings.HasPrefix(o, "--include-path") {
			t.Errorf("built-in shader got %q", o)
		}
	}
}

func TestIncludeFingerprintFollowsEdits(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "sub", "a.cuh")
	if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := includeFingerprint([]string{dir})
	if includeFingerprint([]string{dir}) != before {
		t.Fatal("fingerprint changes without an edit")
	}
	if err := os.WriteFile(h, []byte("xy"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(h, time.Now(), time.Now().Add(time.Hour))
	if includeFingerprint([]string{dir}) == before {
		t.Fatal("editing a header leaves the fingerprint as it was")
	}
	if includeFingerprint(nil) != "" {
		t.Fatal("no include dirs should give an empty fingerprint")
	}
}

// NVRTC 11 compiles without -lineinfo (it crashed on one-line kernels);
// 12 and later, and an NVRTC that did not say its version, keep it.
func TestOptionsForNVRTC(t *testing.T) {
	opts := []string{"--gpu-architecture=sm_90", "-lineinfo", "--std=c++17"}
	for major, want := range map[int]bool{11: false, 12: true, 13: true, 0: true} {
		got := slices.Contains(optionsFor(opts, major), "-lineinfo")
		if got != want {
			t.Errorf("NVRTC %d: -lineinfo kept %v, want %v", major, got, want)
		}
	}
	if len(opts) != 3 || opts[1] != "-lineinfo" {
		t.Errorf("optionsFor changed its argument: %v", opts)
	}
}

// debianInclude is /usr/include with Debian's CUDA packages: the toolkit's
// headers beside glibc's and other libraries'.
var debianInclude = []string{"/usr/include/cuda_fp16.h", "/usr/include/cuda_bf16.h", "/usr/include/cuda_runtime.h",
	"/usr/include/crt/host_config.h", "/usr/include/cub/cub.cuh", "/usr/include/cuda/std/type_traits",
	"/usr/include/thrust/version.h", "/usr/include/nv/target", "/usr/include/sm_20_intrinsics.h",
	"/usr/include/cooperative_groups.h", "/usr/include/curand_kernel.h", "/usr/include/nvtx3/nvToolsExt.h",
	"/usr/include/stdio.h", "/usr/include/features.h", "/usr/include/bits/libc-header-start.h", "/usr/include/math.h",
	"/usr/include/curses.h", "/usr/include/curl/curl.h", "/usr/include/zlib.h", "/usr/include/x86_64-linux-gnu/sys/types.h"}

// A system include folder (/usr/include with a distribution's CUDA
// packages) is used through a view of its toolkit headers only, whether
// NVRTC's place, nvcc's or the user's list names it.
func TestFindIncludeDirsSystemInclude(t *testing.T) {
	const view = "/cache/view/usr/include"
	wantNames := []string{"cooperative_groups.h", "crt", "cub", "cuda", "cuda_bf16.h", "cuda_fp16.h", "cuda_runtime.h",
		"curand_kernel.h", "nv", "nvtx3", "sm_20_intrinsics.h", "thrust"}
	const used = "used (system include: toolkit headers only, through " + view + ")"
	cases := []struct {
		name         string
		env          map[string]string
		nvcc, nvrtc  string
		wantSearched []string
	}{
		{name: "NVRTC from /usr/lib/<triplet>: /usr/include", nvrtc: "/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2",
			wantSearched: []string{"/usr/include: " + used}},
		{name: "nvcc in /usr/bin (Ubuntu's nvidia-cuda-toolkit)", nvcc: "/usr/bin/nvcc", nvrtc: "/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2",
			wantSearched: []string{"/usr/include: " + used, "/usr/include: duplicate (system include: toolkit headers only, through " + view + ")"}},
		{name: "MLTOP_CUDA_INCLUDE=/usr/include", env: map[string]string{IncludeEnv: "/usr/include"},
			wantSearched: []string{"/usr/include: " + used}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := newFakeFS(nil, debianInclude...)
			got, searched := findIncludeDirs(fs.lookup(c.env, c.nvcc, c.nvrtc))
			if !slices.Equal(got, []string{view}) {
				t.Errorf("dirs = %q, want the view %q only", got, view)
			}
			if names := fs.views[view]; !slices.Equal(names, wantNames) {
				t.Errorf("the view links %q\nwant %q", names, wantNames)
			}
			var lines []string
			for _, s := range searched {
				lines = append(lines, s.Dir+": "+s.Result)
			}
			for _, w := range c.wantSearched {
				if !slices.Contains(lines, w) {
					t.Errorf("searched lacks %q: %q", w, lines)
				}
			}
			if s := includeSummary(searched); !strings.Contains(s, "(system include: its CUDA toolkit headers only)") {
				t.Errorf("includeSummary = %q", s)
			}
		})
	}
	t.Run("no view can be made: not used, and the report says why", func(t *testing.T) {
		fs := newFakeFS(nil, debianInclude...)
		fs.viewErr = errors.New("read-only file system")
		got, searched := findIncludeDirs(fs.lookup(nil, "", "/usr/lib/x86_64-linux-gnu/libnvrtc.so.11.2"))
		if len(got) != 0 {
			t.Errorf("dirs = %q, want none (the C library's headers must not reach NVRTC)", got)
		}
		info := ToolkitInfo{Searched: searched}
		if s := info.String(); !strings.Contains(s, "looked in /usr/include (next to NVRTC): a system include directory") || !strings.Contains(s, "read-only file system") {
			t.Errorf("report:\n%s", s)
		}
	})
	t.Run("a toolkit folder without the C library's headers is used as it is", func(t *testing.T) {
		fs := newFakeFS(nil, "/usr/local/cuda/include/cuda_fp16.h", "/usr/local/cuda/include/math_constants.h")
		got, _ := findIncludeDirs(fs.lookup(nil, "", ""))
		if !slices.Equal(got, []string{"/usr/local/cuda/include"}) || len(fs.views) != 0 {
			t.Errorf("dirs = %q, views %v", got, fs.views)
		}
	})
	t.Run("NVRTC from /usr/lib/<triplet> without CUDA headers in /usr/include", func(t *testing.T) {
		fs := newFakeFS(nil, "/usr/include/stdio.h", "/usr/include/features.h")
		got, searched := findIncludeDirs(fs.lookup(nil, "", "/usr/lib/aarch64-linux-gnu/libnvrtc.so.12"))
		if len(got) != 0 || !slices.ContainsFunc(searched, func(s IncludeSearch) bool {
			return s.Dir == "/usr/include" && s.Result == "no cuda_fp16.h or cuda_runtime.h"
		}) {
			t.Errorf("dirs = %q, searched %+v", got, searched)
		}
		if s := includeSummary(searched); !strings.Contains(s, "no CUDA toolkit headers found (set "+IncludeEnv) {
			t.Errorf("includeSummary = %q", s)
		}
	})
}

func TestIsToolkitEntry(t *testing.T) {
	for _, n := range []string{"cuda_fp16.h", "cuda_bf16.hpp", "cuda.h", "cuda_runtime.h", "cudaTypedefs.h", "cuComplex.h",
		"crt", "cub", "thrust", "cuda", "nv", "cccl", "nvtx3", "nvfunctional", "mma.h", "cooperative_groups",
		"cooperative_groups.h", "curand_kernel.h", "cublas_v2.h", "cufft.h", "cusparse.h", "cusolverDn.h", "cupti.h",
		"nppi.h", "sm_20_intrinsics.h", "sm_61_intrinsics.hpp", "vector_types.h", "device_functions.h", "driver_types.h",
		"math_constants.h", "texture_types.h", "surface_types.h", "builtin_types.h", "channel_descriptor.h",
		"common_functions.h", "library_types.h", "host_defines.h", "nvrtc.h", "nvToolsExt.h"} {
		if !isToolkitEntry(n) {
			t.Errorf("%s: not taken as the toolkit's", n)
		}
	}
	for _, n := range []string{"stdio.h", "features.h", "math.h", "stdlib.h", "bits", "sys", "linux", "asm-generic",
		"x86_64-linux-gnu", "c++", "curses.h", "cursesw.h", "curl", "cups", "zlib.h", "python3.12", "GL", "X11",
		"nvme", "nvidia", "host.h", "device.h", "cuda-gdb", "CL", "libnv.h", "vector", "math.hpp"} {
		if isToolkitEntry(n) {
			t.Errorf("%s: taken as the toolkit's", n)
		}
	}
}

// systemView makes the folder of links once, under the cache folder, and
// finds it again; another set of names is another folder.
func TestSystemView(t *testing.T) {
	src, cache := t.TempDir(), t.TempDir()
	t.Setenv("MLTOP_CACHE_DIR", cache)
	for _, f := range []string{"cuda_fp16.h", "stdio.h", "cub/cub.cuh"} {
		p := filepath.Join(src, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// "+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := systemView(src, []string{"cub", "cuda_fp16.h"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, filepath.Join(cache, "include")+string(filepath.Separator)) {
		t.Errorf("view %s is not under %s", v, cache)
	}
	for f, want := range map[string]bool{"cuda_fp16.h": true, "cub/cub.cuh": true, "stdio.h": false} {
		b, err := os.ReadFile(filepath.Join(v, f))
		if got := err == nil && string(b) == "// "+f; got != want {
			t.Errorf("%s in the view: %v, want %v (%v)", f, got, want, err)
		}
	}
	again, err := systemView(src, []string{"cub", "cuda_fp16.h"})
	if err != nil || again != v {
		t.Errorf("second call: %s, %v; want %s", again, err, v)
	}
	other, err := systemView(src, []string{"cuda_fp16.h"})
	if err != nil || other == v {
		t.Errorf("another set of names: %s, %v; want a folder other than %s", other, err, v)
	}
	entries, _ := os.ReadDir(filepath.Dir(v))
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want the 2 views (no temporary folder left)", len(entries))
	}
}

// The include search follows MLTOP_CUDA_INCLUDE as it changes within a
// process: a search under one setting is not kept for the next (a test
// that pointed NVRTC or the headers elsewhere left the README's check
// without headers, and a long-lived process would keep a stale answer).
func TestToolkitSearchFollowsTheSetting(t *testing.T) {
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cuda_fp16.h"), []byte("// marker\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{dirs[0], dirs[1], dirs[0]} {
		t.Setenv(IncludeEnv, d)
		if got := ToolkitIncludeDirs(); !slices.Contains(got, d) {
			t.Errorf("%s=%s: include dirs %v lack it", IncludeEnv, d, got)
		}
	}
}
