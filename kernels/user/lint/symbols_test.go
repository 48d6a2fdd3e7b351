package lint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The source step names each global a buffer fills; the plan step fails a
// buffer whose bytes are not the global's declared size, naming both.
func TestSymbolBuffers(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"convolution.cu", "kernel.yaml", "ref.py"} {
		b, err := os.ReadFile(filepath.Join("../../../examples/constant_table", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "kernel.yaml")
	r := Check(path, noTools(t)).Manifests[0]
	text := findingsOf(r)
	mustContain(t, "symbol note", text, "note    [source] "+filepath.Join(dir, "convolution.cu")+":15: buffer c_Kernel fills `__constant__ float c_Kernel[KERNEL_LENGTH]` before each spec's launches; its size is checked when each spec plans")
	if r.Failed() || r.Broken() {
		t.Fatalf("the example fails: %s\n%s", r.Verdict(), text)
	}
	m, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(m), "shape: [17]", "shape: [16]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = Check(path, noTools(t)).Manifests[0]
	text = findingsOf(r)
	mustContain(t, "size", text, "error   [plan]", "buffer c_Kernel fills c_Kernel, which convolution.cu:15 declares as `__constant__ float c_Kernel[KERNEL_LENGTH]`: 17 × 4 B = 68 B, but the buffer is 16 × f32 = 64 B")
	if !r.Failed() {
		t.Errorf("a size that differs passes: %s", r.Verdict())
	}
}
