package metal

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestWorkerOrderWrapAndPanic(t *testing.T) {
	depth := 0
	wraps := 0
	w := newWorker(func(f func() error) error {
		wraps++
		depth++
		defer func() { depth-- }()
		return f()
	})
	defer w.stop()
	var got []int
	var mu sync.Mutex
	for i := range 5 {
		if err := w.do(func() error {
			if depth != 1 {
				t.Errorf("call %d ran outside the wrapper (depth %d)", i, depth)
			}
			mu.Lock()
			got = append(got, i)
			mu.Unlock()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 5 || got[4] != 4 || wraps != 5 {
		t.Fatalf("calls %v, wraps %d", got, wraps)
	}
	want := errors.New("boom")
	if err := w.do(func() error { return want }); !errors.Is(err, want) {
		t.Fatalf("error not returned: %v", err)
	}
	if err := w.do(func() error { panic("kaboom") }); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic not turned into an error: %v", err)
	}
	if err := w.do(func() error { return nil }); err != nil {
		t.Fatalf("worker dead after a panic: %v", err)
	}
}
