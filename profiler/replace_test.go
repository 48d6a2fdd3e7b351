package profiler

import "testing"

type namedFamily struct {
	Family
	name, doc string
}

func (n namedFamily) Name() string { return n.name }
func (n namedFamily) Doc() string  { return n.doc }

func TestReplace(t *testing.T) {
	a := namedFamily{name: "test_replace_a", doc: "first"}
	if old := Replace(a); old != nil {
		t.Fatalf("first Replace returned %v, want nil", old)
	}
	b := namedFamily{name: "test_replace_a", doc: "second"}
	if old := Replace(b); old == nil || old.Doc() != "first" {
		t.Fatalf("Replace returned %v, want the first family", old)
	}
	f, err := Lookup("test_replace_a")
	if err != nil || f.Doc() != "second" {
		t.Fatalf("Lookup after Replace = %v, %v; want the second family", f, err)
	}
}
