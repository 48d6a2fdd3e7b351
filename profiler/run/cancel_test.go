package run

import (
	"context"
	"errors"
	"testing"
)

func TestCancelReason(t *testing.T) {
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	term, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(errors.New("terminated (SIGTERM)"))
	child, stop := context.WithCancel(term)
	defer stop()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"ctrl-C (no cause)", plain, "cancelled by user"},
		{"SIGTERM", term, "terminated (SIGTERM)"},
		{"a context derived from SIGTERM's", child, "terminated (SIGTERM)"},
		{"nil", nil, "cancelled by user"},
	} {
		if got := CancelReason(tc.ctx); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
