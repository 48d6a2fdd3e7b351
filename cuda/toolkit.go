package cuda

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// IncludeEnv lists extra include directories for user kernels (a path
// list, like PATH), searched before the CUDA toolkit's own.
const IncludeEnv = "MLTOP_CUDA_INCLUDE"

// toolkitMarkers are the headers that make a directory a CUDA toolkit
// include directory.
var toolkitMarkers = []string{"cuda_fp16.h", "cuda_runtime.h"}

// cubMarker makes a directory a CCCL one (cub/, thrust/, cuda/std): the
// toolkit's include/cccl, or the nvidia-cuda-cccl wheel's include.
const cubMarker = "cub/cub.cuh"

// IncludeSearch is one place the include search looked.
type IncludeSearch struct {
	Dir    string // the directory (or the pattern it globbed)
	From   string // why it was looked at: "MLTOP_CUDA_INCLUDE", "CUDA_HOME", "nvcc on PATH", "default", "next to NVRTC"
	Result string // "used", "used (+cccl)", "no such directory", "no cuda_fp16.h or cuda_runtime.h", "duplicate", "used (system include: …)"
	// View: for a system include directory (the toolkit's headers beside
	// the C library's, as in /usr/include), the folder of links to its
	// toolkit headers that NVRTC gets instead (systemView).
	View string
}

// includeLookup is what the search reads of the machine: tests inject a
// fake file system and environment.
type includeLookup struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	glob     func(string) ([]string, error)
	realPath func(string) (string, error) // resolves symbolic links
	isDir    func(string) bool
	isFile   func(string) bool
	readDir  func(string) ([]string, error) // the names in a directory
	// view makes (or finds) a folder of links to the entries names of the
	// system include directory dir and returns its path (systemView).
	view  func(dir string, names []string) (string, error)
	nvrtc string // the path of the NVRTC library that was loaded; "" if none or unknown
}

// hostLookup reads the real machine.
func hostLookup(nvrtcPath string) includeLookup {
	return includeLookup{
		getenv:   os.Getenv,
		lookPath: exec.LookPath,
		glob:     filepath.Glob,
		realPath: filepath.EvalSymlinks,
		isDir: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && st.IsDir()
		},
		isFile: func(p string) bool {
			st, err := os.Stat(p)
			return err == nil && !st.IsDir()
		},
		readDir: func(p string) ([]string, error) {
			es, err := os.ReadDir(p)
			names := make([]string, len(es))
			for i, e := range es {
				names[i] = e.Name()
			}
			return names, err
		},
		view:  systemView,
		nvrtc: nvrtcPath,
	}
}

// candidate is a directory to look at and why.
type candidate struct {
	dir, from string
	anyDir    bool // MLTOP_CUDA_INCLUDE: the user's word is enough, no marker header needed
}

// findIncludeDirs returns the include directories NVRTC should search for
// user kernels, in order, and every place it looked. A directory counts
// when it holds cuda_fp16.h or cuda_runtime.h (or, next to NVRTC's pip
// wheel, cub/cub.cuh); its cccl subfolder, when present, comes just
// before it. Directories are deduplicated by their real path.
func findIncludeDirs(l includeLookup) ([]string, []IncludeSearch) {
	var dirs []string
	var searched []IncludeSearch
	seen := map[string]bool{}
	add := func(dir string) bool {
		key := filepath.Clean(dir)
		if r, err := l.realPath(key); err == nil {
			key = r
		}
		if seen[key] {
			return false
		}
		seen[key] = true
		dirs = append(dirs, filepath.Clean(dir))
		return true
	}
	for _, c := range includeCandidates(l) {
		s := IncludeSearch{Dir: c.dir, From: c.from}
		switch {
		case !l.isDir(c.dir):
			s.Result = "no such directory"
		case !c.anyDir && !isToolkitInclude(l, c.dir) && !(c.from == fromNVRTC && l.isFile(filepath.Join(c.dir, cubMarker))):
			s.Result = "no " + strings.Join(toolkitMarkers, " or ")
		default:
			dir := c.dir
			if isSystemInclude(l, c.dir) {
				v, err := toolkitView(l, c.dir)
				if err != nil {
					s.Result = "a system include directory (the C library's headers beside the toolkit's), and no folder for its toolkit headers alone: " + err.Error()
					break
				}
				dir, s.View = v, v
			}
			cccl := filepath.Join(dir, "cccl")
			withCCCL := l.isDir(cccl) && add(cccl)
			if add(dir) {
				s.Result = "used"
			} else {
				s.Result = "duplicate"
			}
			if withCCCL {
				s.Result += " (+cccl)"
			}
			if s.View != "" {
				s.Result += " (system include: toolkit headers only, through " + s.View + ")"
			}
		}
		searched = append(searched, s)
	}
	return dirs, searched
}

const fromNVRTC = "next to NVRTC"

func isToolkitInclude(l includeLookup, dir string) bool {
	for _, m := range toolkitMarkers {
		if l.isFile(filepath.Join(dir, m)) {
			return true
		}
	}
	return false
}

// includeCandidates lists the places to look, in the order nvcc users
// expect: the user's list, the toolkit the environment names, the nvcc on
// PATH, the usual install folders (newest versioned one first), then the
// pip wheels beside the NVRTC that was loaded.
func includeCandidates(l includeLookup) []candidate {
	var out []candidate
	for _, d := range filepath.SplitList(l.getenv(IncludeEnv)) {
		if d != "" {
			out = append(out, candidate{dir: d, from: IncludeEnv, anyDir: true})
		}
	}
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if root := l.getenv(env); root != "" {
			out = append(out, candidate{dir: filepath.Join(root, "include"), from: env})
		}
	}
	if nvcc, err := l.lookPath("nvcc"); err == nil {
		out = append(out, candidate{dir: filepath.Join(filepath.Dir(nvcc), "..", "include"), from: "nvcc on PATH"})
		if r, err := l.realPath(nvcc); err == nil && r != nvcc {
			out = append(out, candidate{dir: filepath.Join(filepath.Dir(r), "..", "include"), from: "nvcc on PATH"})
		}
	}
	out = append(out, candidate{dir: "/usr/local/cuda/include", from: "default"})
	versioned, _ := l.glob("/usr/local/cuda-*/include")
	slices.SortFunc(versioned, func(a, b string) int { return compareVersions(b, a) })
	for _, d := range versioned {
		out = append(out, candidate{dir: d, from: "default"})
	}
	out = append(out, candidate{dir: "/opt/cuda/include", from: "default"})
	return append(out, nvrtcNeighbours(l)...)
}

// nvrtcNeighbours are the include folders beside the NVRTC library: the
// toolkit's ../include (lib64 or targets/<arch>/lib), a distribution's
// /usr/include for /usr/lib/<triplet>/libnvrtc.so.N, and for a pip wheel
// (…/site-packages/nvidia/<pkg>/lib/libnvrtc.so.N, <pkg> being cuda_nvrtc
// or the one-folder cu13) every …/site-packages/nvidia/*/include.
func nvrtcNeighbours(l includeLookup) []candidate {
	if l.nvrtc == "" || !strings.Contains(l.nvrtc, string(filepath.Separator)) {
		return nil
	}
	lib := filepath.Dir(l.nvrtc)
	up := filepath.Join(lib, "..", "include")
	if strings.Contains(filepath.Base(lib), "-linux-") && filepath.Base(filepath.Dir(lib)) == "lib" {
		// a distribution's multiarch folder (/usr/lib/x86_64-linux-gnu):
		// the headers are in /usr/include, beside the C library's
		up = filepath.Join(lib, "..", "..", "include")
	}
	out := []candidate{{dir: up, from: fromNVRTC}}
	pkg := filepath.Dir(lib)
	nvidia := filepath.Dir(pkg)
	if filepath.Base(nvidia) != "nvidia" {
		return out
	}
	wheels, _ := l.glob(filepath.Join(nvidia, "*", "include"))
	slices.Sort(wheels)
	for _, w := range wheels {
		out = append(out, candidate{dir: w, from: fromNVRTC})
	}
	return out
}

// compareVersions orders /usr/local/cuda-12.9 before /usr/local/cuda-12.10
// (numerically, field by field); a name without a version sorts first.
func compareVersions(a, b string) int {
	va, vb := dirVersion(a), dirVersion(b)
	for i := range max(len(va), len(vb)) {
		x, y := -1, -1
		if i < len(va) {
			x = va[i]
		}
		if i < len(vb) {
			y = vb[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// dirVersion reads "12.10" out of /usr/local/cuda-12.10/include.
func dirVersion(dir string) []int {
	base := filepath.Base(filepath.Dir(dir))
	_, v, ok := strings.Cut(base, "-")
	if !ok {
		return nil
	}
	var out []int
	for _, f := range strings.Split(v, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// HeaderFound is one well-known header and the include directory that has
// it ("" when none does).
type HeaderFound struct {
	Header string
	Dir    string
}

// wellKnownHeaders are what ToolkitInfo reports on: what user kernels
// most often include.
var wellKnownHeaders = []string{"cuda_fp16.h", "cuda_bf16.h", "cooperative_groups.h", cubMarker}

// ToolkitInfo is what user kernels can #include, for `mltop list` and
// `mltop selftest`.
type ToolkitInfo struct {
	NVRTC       string          // "NVRTC 13.0 from <path>", or why there is none
	IncludeDirs []string        // passed to NVRTC as --include-path, in order
	Searched    []IncludeSearch // every place looked, in order
	Headers     []HeaderFound   // cuda_fp16.h, cuda_bf16.h, cooperative_groups.h, cub/cub.cuh
}

// Has says whether an include directory holds the header.
func (t ToolkitInfo) Has(header string) bool {
	for _, h := range t.Headers {
		if h.Header == header {
			return h.Dir != ""
		}
	}
	return false
}

// String is a short multi-line report: NVRTC, the well-known headers, the
// include path, then the places that were looked at and not used.
func (t ToolkitInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "NVRTC: %s\n", t.NVRTC)
	for _, h := range t.Headers {
		where := "not found"
		if h.Dir != "" {
			where = h.Dir
		}
		fmt.Fprintf(&b, "  %-22s %s\n", h.Header, where)
	}
	if len(t.IncludeDirs) == 0 {
		fmt.Fprintf(&b, "include path: none found (set %s, CUDA_HOME or put nvcc on PATH)\n", IncludeEnv)
	} else {
		fmt.Fprintf(&b, "include path: %s\n", strings.Join(t.IncludeDirs, string(filepath.ListSeparator)))
	}
	for _, s := range t.Searched {
		if !strings.HasPrefix(s.Result, "used") && s.Result != "duplicate" || s.View != "" {
			fmt.Fprintf(&b, "  looked in %s (%s): %s\n", s.Dir, s.From, s.Result)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// toolkitInfo builds the report from the search's results.
func toolkitInfo(l includeLookup, nvrtcDesc string) ToolkitInfo {
	dirs, searched := findIncludeDirs(l)
	t := ToolkitInfo{NVRTC: nvrtcDesc, IncludeDirs: dirs, Searched: searched}
	for _, h := range wellKnownHeaders {
		hf := HeaderFound{Header: h}
		for _, d := range dirs {
			if l.isFile(filepath.Join(d, h)) {
				hf.Dir = d
				break
			}
		}
		t.Headers = append(t.Headers, hf)
	}
	return t
}

var (
	toolkitMu       sync.Mutex
	toolkitKey      *string // what the last search ran for (nil: none ran)
	toolkitDirs     []string
	toolkitSearched []IncludeSearch
)

// searchToolkit returns the toolkit's include directories and how the
// search went: searched once per environment (where NVRTC is found,
// MLTOP_CUDA_INCLUDE, CUDA_HOME, PATH, the cache folder all come from it),
// so a process that changes it, as tests do, searches again instead of
// keeping what an earlier setting found. Comparing the environment is
// cheap; finding NVRTC (dlopen, /proc/self/maps) is done only then, not
// on every compile's options.
func searchToolkit() ([]string, []IncludeSearch) {
	key := strings.Join(os.Environ(), "\x00")
	toolkitMu.Lock()
	defer toolkitMu.Unlock()
	if toolkitKey == nil || *toolkitKey != key {
		path, _ := nvrtcLocation()
		toolkitDirs, toolkitSearched = findIncludeDirs(hostLookup(path))
		toolkitKey = &key
	}
	return toolkitDirs, toolkitSearched
}

// ToolkitIncludeDirs are the include directories found on this machine
// (searched once per setting, see searchToolkit): what user programs get
// after their own IncludeDirs.
func ToolkitIncludeDirs() []string {
	dirs, _ := searchToolkit()
	return dirs
}

// includeSummary says in a few words where the toolkit's headers come
// from, for a compile's report: the folders used as the search found
// them, a system include folder marked as such.
func includeSummary(searched []IncludeSearch) string {
	var used []string
	for _, s := range searched {
		if !strings.HasPrefix(s.Result, "used") {
			continue
		}
		d := s.Dir
		if strings.HasPrefix(s.Result, "used (+cccl)") {
			d += " (+cccl)"
		}
		if s.View != "" {
			d += " (system include: its CUDA toolkit headers only)"
		}
		used = append(used, d)
	}
	if len(used) == 0 {
		return "no CUDA toolkit headers found (set " + IncludeEnv + ")"
	}
	return "toolkit headers from " + strings.Join(used, ", ")
}

// Toolkit reports what user kernels can #include here and where it was
// looked for. It needs no GPU and no driver; NVRTC is optional (without
// it the wheels beside NVRTC are not searched).
func Toolkit() ToolkitInfo {
	path, desc := nvrtcLocation()
	return toolkitInfo(hostLookup(path), desc)
}
