//go:build linux

package cuda

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nvrtcLocation loads NVRTC and says where it is: its file (found in the
// process's mappings when it was loaded by soname), and a one-line
// description, or why there is none.
func nvrtcLocation() (path, desc string) {
	nv, err := loadNVRTC()
	if err != nil {
		return "", err.Error()
	}
	path = nv.path
	if !strings.Contains(path, "/") {
		if p := mappedLibrary("libnvrtc.so"); p != "" {
			path = p
		}
	}
	ma, mi, err := nv.version()
	if err != nil {
		return path, fmt.Sprintf("%s (version unknown: %v)", path, err)
	}
	return path, fmt.Sprintf("NVRTC %d.%d from %s", ma, mi, path)
}

// mappedLibrary is the file of a loaded library whose name starts with
// prefix, from /proc/self/maps; "" if none.
func mappedLibrary(prefix string) string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		p := fields[len(fields)-1]
		if strings.HasPrefix(filepath.Base(p), prefix) {
			return p
		}
	}
	return ""
}
