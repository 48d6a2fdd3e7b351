package backends

import (
	"testing"
)

// TestRegistry walks every entry: each has a name, can say whether it is
// available, open and count its devices; names are unique and are what
// --backend and a sweep file's backend: accept.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All() {
		if b.Name == "" || b.Name == Auto || seen[b.Name] {
			t.Errorf("backend %q: empty, auto or listed twice", b.Name)
		}
		seen[b.Name] = true
		if b.Available == nil || b.Open == nil || b.Devices == nil {
			t.Errorf("backend %s lacks Available, Open or Devices", b.Name)
			continue
		}
		if ok, why := b.Available(); why == "" {
			t.Errorf("backend %s: Available (%t) says no why", b.Name, ok)
		}
		if got, ok := Lookup(b.Name); !ok || got.Name != b.Name {
			t.Errorf("Lookup(%s) = %v, %t", b.Name, got.Name, ok)
		}
	}
	if _, ok := Lookup("auto"); ok {
		t.Error("Lookup(auto) found a backend; Resolve picks one")
	}
	if _, ok := Lookup("vulkan"); ok {
		t.Error("Lookup found an unknown backend")
	}
}

// TestResolve: auto becomes an available backend (the CPU runs anywhere);
// a name stays itself.
func TestResolve(t *testing.T) {
	got := Resolve(Auto)
	b, ok := Lookup(got)
	if !ok {
		t.Fatalf("Resolve(auto) = %q, not a backend", got)
	}
	if avail, _ := b.Available(); !avail && got != "cpu" {
		t.Errorf("Resolve(auto) = %s, which is not available", got)
	}
	if Resolve("cuda") != "cuda" {
		t.Error("Resolve changed a named backend")
	}
}

// TestCPUDevices: the CPU is one device unless the test hook says more.
func TestCPUDevices(t *testing.T) {
	cpu, _ := Lookup("cpu")
	t.Setenv(FakeDevicesEnv, "")
	if _, err := cpu.Devices(); err == nil {
		t.Error("the cpu backend counted devices without the test hook")
	}
	t.Setenv(FakeDevicesEnv, "3")
	if n, err := cpu.Devices(); n != 3 || err != nil {
		t.Errorf("with %s=3: %d %v", FakeDevicesEnv, n, err)
	}
	t.Setenv(FakeDevicesEnv, "x")
	if _, err := cpu.Devices(); err == nil {
		t.Error("a bad count passed")
	}
}
