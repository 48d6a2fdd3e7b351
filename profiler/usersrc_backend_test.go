package profiler

import (
	"strings"
	"testing"
)

// langFamily is a user kernel as UserBackendFlag sees one: its sources'
// languages and its manifest's path.
type langFamily struct {
	Family
	name  string
	langs []string
}

func (f langFamily) Name() string        { return f.name }
func (f langFamily) Languages() []string { return f.langs }
func (f langFamily) Path() string        { return "/k/" + f.name + "/kernel.yaml" }

// Every message that says a backend cannot run a user kernel names the
// backend its sources are for: CUDA alone, Metal alone, or both when it
// has both (or mltop does not know the kernel).
func TestUserBackendFlag(t *testing.T) {
	for _, c := range []struct {
		name  string
		langs []string
		want  string
	}{
		{"test_ubf_cuda", []string{"cuda"}, "--backend cuda"},
		{"test_ubf_metal", []string{"metal"}, "--backend metal"},
		{"test_ubf_both", []string{"cuda", "metal"}, "--backend cuda or metal"},
		{"test_ubf_unknown", nil, "--backend cuda or metal"},
	} {
		if c.langs != nil {
			Register(langFamily{name: c.name, langs: c.langs})
		}
		if got := UserBackendFlag(c.name); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		msg := CPUCannotRunUser(c.name)
		if c.name != "test_ubf_both" && !strings.Contains(msg, c.want) || c.want == "--backend cuda" && strings.Contains(msg, "metal") {
			t.Errorf("%s: CPUCannotRunUser %q does not name %q alone", c.name, msg, c.want)
		}
	}
}
