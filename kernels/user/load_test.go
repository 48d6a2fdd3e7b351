package user

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
	"github.com/mltop/mltop/profiler"
)

func TestVersionFollowsFiles(t *testing.T) {
	y := strings.Replace(goodYAML, "check: none", "check: {python: ref.py}", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source, "ref.py": "def reference(i, d):\n    return {}\n"})
	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Load(path)
	if a.Version() == "" || a.Version() != b.Version() {
		t.Fatalf("versions %q %q", a.Version(), b.Version())
	}
	os.WriteFile(filepath.Join(filepath.Dir(path), "ref.py"), []byte("def reference(i, d):\n    return {'Y': 1}\n"), 0o644)
	c, _ := Load(path)
	if c.Version() == a.Version() {
		t.Error("editing ref.py kept the version")
	}
}

// registered lists the registered families whose name starts with prefix.
func registered(prefix string) []string {
	var out []string
	for _, f := range profiler.Families(true) {
		if strings.HasPrefix(f.Name(), prefix) {
			out = append(out, f.Name())
		}
	}
	return out
}

// TestRegisterRename: loading a manifest again after its name changed
// (what a worker subprocess does on reload) replaces the old name too,
// and a name another manifest holds is refused with the kernel kept.
func TestRegisterRename(t *testing.T) {
	y := strings.Replace(goodYAML, "name: t_kernel", "name: test_reg_a", 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": y, "k.cu": usertest.Source})
	other := usertest.Write(t, map[string]string{"kernel.yaml": strings.Replace(y, "test_reg_a", "test_reg_other", 1), "k.cu": usertest.Source})
	for _, p := range []string{path, other} {
		if _, err := Register(p); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(path, []byte(strings.Replace(y, "test_reg_a", "test_reg_b", 1)), 0o644)
	if _, err := Register(path); err != nil {
		t.Fatal(err)
	}
	if got := registered("test_reg_"); !slices.Equal(got, []string{"test_reg_b", "test_reg_other"}) {
		t.Errorf("registered after the rename: %v", got)
	}
	os.WriteFile(path, []byte(strings.Replace(y, "test_reg_a", "test_reg_other", 1)), 0o644)
	_, err := Register(path)
	if err == nil || !strings.Contains(err.Error(), "test_reg_other is already the name of the kernel in "+other) || !strings.Contains(err.Error(), "stays registered as test_reg_b") {
		t.Errorf("rename onto another manifest's name: %v", err)
	}
	if got := registered("test_reg_"); !slices.Equal(got, []string{"test_reg_b", "test_reg_other"}) {
		t.Errorf("registered after the refused rename: %v", got)
	}
}
