package lint

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user/usertest"
)

// The check lists the source constants the manifest's expressions use,
// with their values and where the source defines them; a manifest that
// uses none gets no such note.
func TestSourceConstantsNoted(t *testing.T) {
	src := "#define BLOCK_DIM 1024\nconstexpr int kCoarse = 2;\n" + usertest.Source
	m := strings.Replace(usertest.Manifest("consts_k"), "grid: [rows]", `grid: ["cdiv(rows, BLOCK_DIM * kCoarse)"]`, 1)
	path := usertest.Write(t, map[string]string{"kernel.yaml": m, "k.cu": src})
	text := findingsOf(Check(path, Options{Static: true}).Manifests[0])
	mustContain(t, "source constants", text, "source constants the manifest uses:", "BLOCK_DIM = 1024 (k.cu:1)", "kCoarse = 2 (k.cu:2)")

	plain := usertest.Write(t, map[string]string{"kernel.yaml": usertest.Manifest("plain_k"), "k.cu": src})
	if text := findingsOf(Check(plain, Options{Static: true}).Manifests[0]); strings.Contains(text, "source constants") {
		t.Errorf("a manifest that uses no source constant got the note:\n%s", text)
	}
}
