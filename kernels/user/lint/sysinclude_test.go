package lint

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mltop/mltop/cuda"
)

// sysIncludeChild runs TestWholeProgramSystemInclude's check in a child
// process: the toolkit's include folders are searched once per process,
// under the environment the child is given.
const sysIncludeChild = "MLTOP_TEST_SYSINCLUDE_CHILD"

// The CUDA headers of a distribution's packages (Debian's nvidia-cuda-dev,
// Ubuntu's nvidia-cuda-toolkit) sit in /usr/include beside the C
// library's: examples/whole_program compiles at bf16 with the toolkit's
// cuda_bf16.h (not the storage-only stub), and with mltop's stdio.h (not
// glibc's, which NVRTC cannot compile).
func TestWholeProgramSystemInclude(t *testing.T) {
	if os.Getenv(sysIncludeChild) != "" {
		rep := Check("../../../examples/whole_program/kernel.yaml", Options{Arch: "sm_80"})
		text := findingsOf(rep.Manifests[0])
		mustContain(t, "whole_program", text, "CUDA bf16: layernorm_forward_kernel compiles for sm_80", "(system include: its CUDA toolkit headers only)")
		if strings.Contains(text, "error ") {
			t.Errorf("whole_program does not compile:\n%s", text)
		}
		return
	}
	info := cuda.Toolkit()
	if !strings.HasPrefix(info.NVRTC, "NVRTC ") || !info.Has("cuda_bf16.h") {
		t.Skipf("needs NVRTC and the CUDA toolkit's headers: %s", info)
	}
	run := func(t *testing.T, env ...string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestWholeProgramSystemInclude$", "-test.count=1")
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			if k != cuda.IncludeEnv && k != "CUDA_HOME" && k != "CUDA_PATH" && k != "MLTOP_CACHE_DIR" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, append(env, sysIncludeChild+"=1", "MLTOP_CACHE_DIR="+t.TempDir())...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%v:\n%s", err, out)
		}
	}
	t.Run("a folder of the toolkit's headers and the C library's, named by "+cuda.IncludeEnv, func(t *testing.T) {
		// the toolkit's headers found here, beside a stdio.h and a
		// features.h that NVRTC must never get
		// (written first, as new files: never through a link into a
		// real include folder)
		sys := t.TempDir()
		for _, h := range []string{"stdio.h", "features.h"} {
			f, err := os.OpenFile(filepath.Join(sys, h), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			_, werr := f.WriteString("#error the C library's " + h + " reached NVRTC\n")
			if err := errors.Join(werr, f.Close()); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range info.IncludeDirs {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				os.Symlink(filepath.Join(d, e.Name()), filepath.Join(sys, e.Name())) // fails where a name is taken: the first wins
			}
		}
		run(t, cuda.IncludeEnv+"="+sys)
	})
	t.Run("no settings, NVRTC in /usr/lib/<triplet>/ and the headers in /usr/include", func(t *testing.T) {
		nvrtc := info.NVRTC[strings.LastIndex(info.NVRTC, " ")+1:]
		lib := filepath.Dir(nvrtc)
		if filepath.Dir(lib) != "/usr/lib" || !strings.Contains(lib, "-linux-") {
			t.Skipf("NVRTC is %s, not a distribution's", nvrtc)
		}
		for _, h := range []string{"/usr/include/cuda_bf16.h", "/usr/include/stdio.h"} {
			if _, err := os.Stat(h); err != nil {
				t.Skipf("no distribution layout: %v", err)
			}
		}
		run(t)
	})
}
