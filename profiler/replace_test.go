package profiler

import (
	"strings"
	"testing"
)

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

// TestReplaceNamed: a family registered in place of another name leaves
// only its own name registered, and returns the family it displaced.
func TestReplaceNamed(t *testing.T) {
	Replace(namedFamily{name: "test_rename_old", doc: "old"})
	prev := ReplaceNamed("test_rename_old", namedFamily{name: "test_rename_new", doc: "new"})
	if prev == nil || prev.Doc() != "old" {
		t.Fatalf("ReplaceNamed returned %v, want the family called test_rename_old", prev)
	}
	if f, err := Lookup("test_rename_old"); err == nil {
		t.Errorf("test_rename_old is still registered (%s) after the rename", f.Doc())
	}
	if f, err := Lookup("test_rename_new"); err != nil || f.Doc() != "new" {
		t.Errorf("Lookup(test_rename_new) = %v, %v; want the renamed family", f, err)
	}
	n := 0
	for _, f := range Families(true) {
		if strings.HasPrefix(f.Name(), "test_rename_") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Families lists %d test_rename_ families, want 1", n)
	}
}
