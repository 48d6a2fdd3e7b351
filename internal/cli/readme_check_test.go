package cli

import (
	"strings"
	"testing"
)

// TestReadmeCheckSampleIsTheMainManifest: the README's `mltop check`
// sample checks the example's main manifest only (a folder would also
// check its planted-bug twin and print "=> ok" for it, which reads as
// "broken … ok"), its lines are what check prints for it, and the README
// says the twin is caught by `check --run` (a GPU, else the CUDA
// emulation).
func TestReadmeCheckSampleIsTheMainManifest(t *testing.T) {
	readme := docFiles(t)["README.md"]
	const cmd = "`./mltop check ./examples/whole_program/kernel.yaml` needs no GPU."
	_, after, ok := strings.Cut(readme, cmd)
	if !ok {
		t.Fatalf("README.md lacks %q", cmd)
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, rest, _ := strings.Cut(block, "```\n")
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if strings.Contains(block, "broken") || strings.Count(block, "=> ") != 1 {
		t.Errorf("the check sample should show the main manifest alone:\n%s", block)
	}
	if !strings.Contains(rest[:min(len(rest), 400)], "`check --run` catches it as a `mismatch`, on a GPU or, without one, on the CUDA emulation") {
		t.Errorf("after the check sample the README should say the broken twin passes check and is caught by check --run:\n%s", rest[:min(len(rest), 400)])
	}
	code, out, errs := runCLI(t, "check", "./examples/whole_program/kernel.yaml")
	if code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errs)
	}
	got := strings.Split(strings.TrimSpace(out), "\n")
	// The header and the source's entry line do not depend on the machine
	// (NVRTC, Python); the verdict's word does not either.
	for i, want := range lines[:2] {
		if got[i] != want {
			t.Errorf("README line %q, check prints %q", want, got[i])
		}
	}
	// The verdict, then the line saying that no kernel ran.
	if len(got) < 2 || !strings.HasPrefix(strings.TrimSpace(got[len(got)-3]), "=> ok") || !strings.HasPrefix(strings.TrimSpace(lines[len(lines)-2]), "=> ok") {
		t.Errorf("README's verdict %q, check's %q", lines[len(lines)-2], got[max(0, len(got)-3)])
	}
	if got[len(got)-1] != notRunNote || lines[len(lines)-1] != notRunNote {
		t.Errorf("README ends with %q, check with %q; want %q", lines[len(lines)-1], got[len(got)-1], notRunNote)
	}
}
