package mslemu

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mltop/mltop/profiler"
)

const fillKernel = "kernel void fill(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = float(i) * 2.0f; }\n"

// Open's Backend compiles and runs a user kernel with the embedded
// headers; once its context ends, g++ and the emulated kernel stop with
// the context's error; Close removes its folder.
func TestOpenRunsAndStops(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err := Open(ctx, EmulatedDevice())
	if err != nil {
		t.Fatal(err)
	}
	k, err := e.Compile(profiler.Program{Entry: "fill", File: "fill.metal", Code: fillKernel})
	if err != nil {
		t.Fatal(err)
	}
	buf, _ := e.Alloc(4 * 64)
	d := &profiler.Dispatch{Name: "fill", Grid: [3]int{2, 1, 1}, Group: [3]int{32, 1, 1}, Args: []string{"x"}}
	launch := []profiler.Launch{{Dispatch: d, Kernel: k, Args: []profiler.Buffer{buf}}}
	if err := e.Run(launch); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4*64)
	e.Download(buf, got)
	if v := math.Float32frombits(binary.LittleEndian.Uint32(got[4*63:])); v != 126 {
		t.Errorf("x[63] = %g, want 126", v)
	}
	cancel()
	if err := e.Run(launch); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "emulated fill stopped") {
		t.Errorf("a run after the context ended: %v", err)
	}
	if _, err := e.Compile(profiler.Program{Entry: "fill", File: "fill2.metal", Code: "// another\n" + fillKernel}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "g++ stopped") {
		t.Errorf("a compile after the context ended: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", e.dir, err)
	}
}

// Without g++ on PATH, Open says so.
func TestOpenWithoutGxx(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Open(context.Background(), EmulatedDevice()); !errors.Is(err, ErrNoCompiler) {
		t.Errorf("Open without g++: %v, want ErrNoCompiler", err)
	}
}

// A test's Backend (New) keeps the test's folder: Close leaves it to the
// test.
func TestCloseKeepsATestsFolder(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("no g++")
	}
	e := New(t, "../testdata/mslemu", EmulatedDevice())
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.dir); err != nil {
		t.Errorf("Close removed a test's folder: %v", err)
	}
}
