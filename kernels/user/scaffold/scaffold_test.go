package scaffold

import (
	"strings"
	"testing"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/usertest"
)

func TestScaffold(t *testing.T) {
	src := "extern \"C\" __global__ void k(const T* __restrict__ x, const int* ids, T* y, int n, int time) {}"
	text, notes, err := Manifest("my_k", "/w/k.cu", src, "k", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"sources: {cuda: k.cu}", "{name: x, dtype: T, shape: [N], init: \"normal(0, 1)\"}", "{name: ids, dtype: i32, shape: [N], init: \"randint(0, 1024)\"}", "{name: y, dtype: T, shape: [N], out: true}", "TIME: {default", "args: [x, ids, y, N, TIME]", "check: none", "dtypes: [f32, f16, bf16]"} {
		if !strings.Contains(text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, text)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "parameter time is named TIME") {
		t.Errorf("notes %v", notes)
	}
	// what it writes parses (with a source beside it)
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, "k.cu": src})
	if _, err := user.Load(path); err != nil {
		t.Errorf("the scaffold does not load: %v", err)
	}
	if _, _, err := Manifest("my_k", "/w/k.txt", src, "k", "/w"); err == nil {
		t.Error("a .txt source was accepted")
	}
	if _, _, err := Manifest("1bad", "/w/k.cu", src, "k", "/w"); err == nil {
		t.Error("a bad name was accepted")
	}
}

// TestScaffoldWorkAndShared: new never writes zero work (throughput 0) and
// suggests a tgm: item per static shared array, with its bytes when the
// type and extents are known.
func TestScaffoldWorkAndShared(t *testing.T) {
	src := `extern "C" __global__ void rowsum(const float* x, float* y, int rows) {
    __shared__ float red[1024];
    __shared__ T tile[WG][33];
    __shared__ float other[BLOCK];
    __shared__ mystruct s[4];
    extern __shared__ float dyn[];
}`
	text, notes, err := Manifest("my_rowsum", "/w/k.cu", src, "rowsum", "/w")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`- {name: red, bytes: "4096"}`,
		`- {name: tile, bytes: "WG * 33 * sizeof(T)"}`,
		`# - {name: other, bytes: "TODO"}`,
		`# - {name: s, bytes: "TODO"}`,
	} {
		if !strings.Contains(text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, `flops: "0"`) || strings.Contains(text, `bytes: "0"`) || strings.Contains(text, "\nwork:") {
		t.Errorf("manifest writes zero work:\n%s", text)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "extern shared array dyn") {
		t.Errorf("notes lack the extern array: %v", notes)
	}
	path := usertest.Write(t, map[string]string{"kernel.yaml": text, "k.cu": src})
	if _, err := user.Load(path); err != nil {
		t.Errorf("the scaffold does not load: %v", err)
	}
}
