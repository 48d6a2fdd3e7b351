package user

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

// The manifest's defines: decide the scan's #if conditions as the
// compiler gets them: the kernel whose only definition is the branch of
// a define is kept (the scanner read the other, unbalanced branch, a host
// fallback, and blanked it), and host code under a define's branch is
// blanked, over NVRTC's own view of USE_ROCM. A define whose value
// changes with the spec decides nothing (TestPrepareDefines). With NVRTC
// found, each program compiles.
func TestPrepareDefinesDecideTheScan(t *testing.T) {
	withToolkit(t)
	const kernelHead = `extern "C" __global__ void k(const T* X, T* Y, int rows, int cols) {`
	for _, c := range []struct {
		name, defines, src string
		kept, blanked      []string
	}{
		{"the kernel under #else of #ifndef MY_FLAG", "  MY_FLAG: 1\n",
			"#ifndef MY_FLAG\nvoid k(const T* X, T* Y, int rows, int cols) {\n#else\n" + kernelHead + "\n#endif\n    Y[0] = X[0];\n}\n",
			[]string{kernelHead, "Y[0] = X[0];"}, nil},
		{"a bool define", "  MY_FLAG: true\n",
			"#if !defined(MY_FLAG)\nvoid k(const T* X, T* Y, int rows, int cols) {\n#else\n" + kernelHead + "\n#endif\n    Y[0] = X[0];\n}\n",
			[]string{kernelHead, "Y[0] = X[0];"}, nil},
		{"a constant condition", "  MY_FLAG: \"2 > 1\"\n",
			"#ifndef MY_FLAG\nvoid k(const T* X, T* Y, int rows, int cols) {\n#else\n" + kernelHead + "\n#endif\n    Y[0] = X[0];\n}\n",
			[]string{kernelHead, "Y[0] = X[0];"}, nil},
		{"host code under USE_ROCM", "  USE_ROCM: 1\n",
			kernelHead + " Y[0] = X[0]; }\n#ifdef USE_ROCM\nvoid launch(const T* X, T* Y) { k<<<1, 1>>>(X, Y, 1, 1); }\n#endif\n",
			[]string{kernelHead}, []string{"void launch", "<<<"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("defs") + "defines:\n" + c.defines, "k.cu": c.src})
			prog, _ := preparedProgram(t, path, profiler.F32)
			for _, want := range c.kept {
				if !strings.Contains(prog.Code, want) {
					t.Errorf("%q blanked, want it kept:\n%s", want, prog.Code)
				}
			}
			for _, lack := range c.blanked {
				if strings.Contains(prog.Code, lack) {
					t.Errorf("%q kept, want it blanked:\n%s", lack, prog.Code)
				}
			}
			compileOrSkip(t, prog)
		})
	}
}
