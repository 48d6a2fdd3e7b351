//go:build linux

package cuda

import (
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
		{"kernel", map[bool]string{true: "", false: "MLTOP_CUDA_TIMER=kernel: cannot load libcupti"}[cuptiErr == nil], cuptiErr == nil},
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
	got := libCandidates("MLTOP_TEST_LIB", "libfoo", "", "")
	want := []string{"/opt/x/libfoo.so.13", "libfoo.so.13", "libfoo.so.12", "libfoo.so"}
	if len(got) < len(want) {
		t.Fatalf("candidates %v", got)
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("candidate %d = %s, want %s (all %v)", i, got[i], w, got)
		}
	}
	t.Setenv("MLTOP_TEST_LIB", "")
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
