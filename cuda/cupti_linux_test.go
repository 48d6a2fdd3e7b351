//go:build linux

package cuda

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTimerEnv(t *testing.T) {
	_, cuptiErr := loadCUPTI()
	cases := []struct {
		val       string
		wantErr   string // "" when no error is expected
		wantClock bool
	}{
		{"events", "", false},
		{"EVENTS", "", false},
		{"cuda-event", "", false},
		{"sometimes", `MLTOP_CUDA_TIMER="sometimes": use kernel`, false},
		{"", "", cuptiErr == nil},
		{"auto", "", cuptiErr == nil},
		{"kernel", "", cuptiErr == nil},
	}
	if cuptiErr != nil {
		// whatever kept CUPTI from starting here (no library, or a library
		// without a driver), named after the setting that asked for it
		cases[len(cases)-1].wantErr = "MLTOP_CUDA_TIMER=kernel: " + cuptiErr.Error()
	}
	for _, c := range cases {
		t.Run(c.val, func(t *testing.T) {
			t.Setenv(TimerEnv, c.val)
			l, why, err := openKernelClock()
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if (l != nil) != c.wantClock {
				t.Errorf("kernel clock %v, want %v", l != nil, c.wantClock)
			}
			if err == nil && l == nil && why == "" {
				t.Errorf("events chosen without a reason")
			}
		})
	}
}

func TestToolkitLibsFindsNothingOutsideItsFolders(t *testing.T) {
	for _, p := range toolkitLibs("libdefinitely-not-a-cuda-lib.so*", "extras/CUPTI/lib64", "cuda_cupti/lib") {
		t.Errorf("found %s", p)
	}
	for _, c := range cuptiCandidates() {
		if strings.Contains(c, "nsight-compute") {
			t.Errorf("candidate %s is Nsight Compute's private copy", c)
		}
	}
}

func TestLibCandidatesOrder(t *testing.T) {
	t.Setenv("MLTOP_TEST_LIB", "/opt/x/libfoo.so.13")
	if got := libCandidates("MLTOP_TEST_LIB", "libfoo", "", ""); !slices.Equal(got, []string{"/opt/x/libfoo.so.13"}) {
		t.Errorf("with the variable set its path is the only candidate: %v", got)
	}
	t.Setenv("MLTOP_TEST_LIB", "")
	got := libCandidates("MLTOP_TEST_LIB", "libfoo", "", "")
	want := []string{"libfoo.so.13", "libfoo.so.12", "libfoo.so"}
	if len(got) < len(want) {
		t.Fatalf("candidates %v", got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("without the variable: candidate %d = %s, want %s (all %v)", i, got[i], w, got)
		}
	}
	if got := libCandidates("MLTOP_TEST_LIB", "libfoo", "", ""); got[0] != "libfoo.so.13" {
		t.Errorf("without the variable the sonames come first: %v", got)
	}
}

// A failed load always says why, naming the library (dlerror is read on
// the thread that called dlopen).
func TestDlopenErrorNamesTheLibrary(t *testing.T) {
	done := make(chan struct{})
	go func() { // keep the scheduler moving goroutines between threads
		for {
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	defer close(done)
	for i := range 300 {
		_, err := dlopen("libmltop-does-not-exist.so.1")
		if err == nil || !strings.Contains(err.Error(), "libmltop-does-not-exist.so.1") {
			t.Fatalf("load %d: error %v, want one naming the library", i, err)
		}
	}
}

// A library path named by the variable that does not load is an error
// naming the variable and its value, even where another copy of the
// library would load (a host with libnvrtc.so on the loader's path).
func TestEnvLibraryThatDoesNotLoadIsAnError(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "libnvrtc.so.13")
	t.Setenv("MLTOP_NVRTC", bad)
	_, err := loadNVRTC()
	if err == nil || !strings.Contains(err.Error(), "MLTOP_NVRTC="+bad) || !strings.Contains(err.Error(), "unset it") {
		t.Errorf("loadNVRTC with MLTOP_NVRTC=%s: %v, want an error naming the variable and its value", bad, err)
	}
	t.Setenv("MLTOP_CUPTI", bad)
	_, err = openCUPTI()
	if err == nil || !strings.Contains(err.Error(), "MLTOP_CUPTI="+bad) {
		t.Errorf("openCUPTI with MLTOP_CUPTI=%s: %v, want an error naming the variable and its value", bad, err)
	}
	t.Setenv("MLTOP_NVRTC", "")
	if err := envLoadError("MLTOP_NVRTC", "NVRTC", "x"); err != nil {
		t.Errorf("unset variable: %v", err)
	}
}
