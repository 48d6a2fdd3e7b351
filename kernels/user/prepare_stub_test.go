package user

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// <cub/cub.cuh> reaches NVRTC as CUB's device-side headers (guarded by
// __has_include) when the toolkit has CUB, and is left alone without it
// (so a missing CUB is NVRTC's own "cannot open source file").
func TestCubHeaderIsDeviceSideOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cub", "cub.cuh"), []byte("// the real one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stub, ok := cudaStub("cub/cub.cuh", toolkitHeaders{dirs: []string{dir}})
	if !ok || !strings.Contains(stub, "#include <cub/block/block_reduce.cuh>") || !strings.Contains(stub, "__has_include(<cub/warp/warp_reduce.cuh>)") || strings.Contains(stub, "device/") {
		t.Errorf("with CUB: stub %v\n%s", ok, stub)
	}
	if _, ok := cudaStub("cub/cub.cuh", toolkitHeaders{}); ok {
		t.Error("without CUB, <cub/cub.cuh> is stubbed")
	}
	if _, ok := cudaStub("cub/block/block_reduce.cuh", toolkitHeaders{dirs: []string{dir}}); ok {
		t.Error("a CUB device header is stubbed")
	}
}
