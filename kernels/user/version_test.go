package user

import (
	"os"
	"path/filepath"
	"testing"
)

// A manifest reached by a relative path (the session: `mltop run
// ./examples/softmax`) and by its absolute path (the worker, through
// MLTOP_KERNELS) has one version; a changed source changes it.
func TestVersionIgnoresHowTheManifestIsReached(t *testing.T) {
	abs, err := filepath.Abs("../../examples/softmax/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Load("../../examples/softmax/kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	full, err := Load(abs)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version() != full.Version() {
		t.Errorf("relative %s, absolute %s: the version depends on the path", rel.Version(), full.Version())
	}
	dir := t.TempDir()
	for _, f := range []string{"kernel.yaml", "softmax.cu", "softmax.metal", "ref.py"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(abs), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "softmax.cu" {
			b = append(b, []byte("\n// edited\n")...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edited, err := Load(filepath.Join(dir, "kernel.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if edited.Version() == full.Version() {
		t.Error("an edited source kept the version")
	}
}
