package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// A distribution's CUDA packages (Debian's nvidia-cuda-dev, Ubuntu's
// nvidia-cuda-toolkit) put the toolkit's headers in /usr/include, beside
// the C library's. NVRTC must not get that folder as it is: glibc's
// stdio.h would stand in for mltop's stub of it (and fail on
// bits/libc-header-start.h), and every other library's headers there would
// count as the toolkit's. Such a folder is passed as a view instead: a
// folder in mltop's cache of links to its toolkit headers only.

// cLibraryMarkers are headers of a C library: a toolkit include folder
// holding one is a system include folder.
var cLibraryMarkers = []string{"features.h", "stdio.h"}

// isSystemInclude says whether dir holds the toolkit's headers and the C
// library's (/usr/include with the distribution's CUDA packages).
func isSystemInclude(l includeLookup, dir string) bool {
	if !isToolkitInclude(l, dir) {
		return false
	}
	for _, m := range cLibraryMarkers {
		if l.isFile(filepath.Join(dir, m)) {
			return true
		}
	}
	return false
}

// toolkitHeaderNames are the entries of a CUDA toolkit's include folder
// (headers, and folders such as crt/ or cub/), by exact name.
var toolkitHeaderNames = map[string]bool{
	"builtin_types.h": true, "channel_descriptor.h": true, "common_functions.h": true, "library_types.h": true,
	"host_config.h": true, "host_defines.h": true, "mma.h": true, "nvfunctional": true, "fatbinary_section.h": true,
	"cuComplex.h": true, "nvrtc.h": true, "nvml.h": true, "nvPTXCompiler.h": true, "nvJitLink.h": true, "nvblas.h": true,
	"nv_decode.h": true, "nvjpeg.h": true, "nvvm.h": true,
	// folders: the runtime's crt/, CCCL (CUB, Thrust, libcu++'s cuda/ and
	// nv/, or all of it under cccl/), NVTX 3
	"crt": true, "cub": true, "thrust": true, "cuda": true, "nv": true, "cccl": true, "nvtx3": true,
}

// toolkitHeaderPrefixes are the name prefixes of the toolkit's entries:
// cuda.h, cuda_*.h, cudaGL.h, …; the libraries (cuBLAS, cuFFT, cuRAND,
// cuSPARSE, cuSOLVER, CUPTI, NPP); the device and intrinsics headers.
var toolkitHeaderPrefixes = []string{"cuda.h", "cuda_", "cudaEGL", "cudaGL", "cudaVDPAU", "cudaProfiler", "cudaTypedefs",
	"cudalibxt", "cudart_", "cublas", "cufft", "cufile", "curand", "cusparse", "cusolver", "cupti", "npp", "nvToolsExt",
	"cooperative_groups", "sm_", "device_", "driver_", "vector_", "math_", "texture_", "surface_"}

// isToolkitEntry says whether an entry of a system include folder is the
// CUDA toolkit's.
func isToolkitEntry(name string) bool {
	if toolkitHeaderNames[name] {
		return true
	}
	for _, p := range toolkitHeaderPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// toolkitView is the view of the system include folder dir: a folder of
// links to its toolkit entries.
func toolkitView(l includeLookup, dir string) (string, error) {
	if l.readDir == nil || l.view == nil {
		return "", errors.New("cannot list it here")
	}
	names, err := l.readDir(dir)
	if err != nil {
		return "", err
	}
	var keep []string
	for _, n := range names {
		if isToolkitEntry(n) {
			keep = append(keep, n)
		}
	}
	slices.Sort(keep)
	return l.view(dir, keep)
}

// viewBases are the folders the views are made in, the first that works:
// profiler.CacheDir("include"), else one in the temporary folder.
func viewBases() []string {
	var out []string
	if d, err := profiler.CacheDir("include"); err == nil {
		out = append(out, d)
	}
	return append(out, filepath.Join(os.TempDir(), fmt.Sprintf("mltop-%d", os.Getuid()), "include"))
}

// systemView makes the folder of links to names in dir, or finds the one
// an earlier run made: its name holds a hash of dir and names, so a
// package that adds a header gets a new one. It is made under a temporary
// name and renamed, so that mltops running at once never see half of one.
// The links of folders (cub/, crt/) follow what the packages put there.
func systemView(dir string, names []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", dir)
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00", n)
	}
	tag := strings.Trim(strings.ReplaceAll(filepath.Clean(dir), string(filepath.Separator), "-"), "-")
	name := "sys-" + tag + "-" + hex.EncodeToString(h.Sum(nil))[:16]
	var errs []error
	for _, base := range viewBases() {
		v, err := makeView(filepath.Join(base, name), dir, names)
		if err == nil {
			return v, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func makeView(view, dir string, names []string) (string, error) {
	if st, err := os.Stat(view); err == nil && st.IsDir() {
		return view, nil
	}
	if err := os.MkdirAll(filepath.Dir(view), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(view), ".tmp-"+filepath.Base(view)+"-")
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if err := os.Symlink(filepath.Join(dir, n), filepath.Join(tmp, n)); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, view); err != nil {
		os.RemoveAll(tmp)
		if st, serr := os.Stat(view); serr == nil && st.IsDir() {
			return view, nil // another mltop made it meanwhile
		}
		return "", err
	}
	return view, nil
}
