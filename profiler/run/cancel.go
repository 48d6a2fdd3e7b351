package run

import (
	"context"
	"errors"
)

// CancelReason is the Error of a result cut short by ctx: the cause the
// context was cancelled with, when one was given (the command line gives
// "terminated (SIGTERM)" for a SIGTERM), else "cancelled by user".
func CancelReason(ctx context.Context) string {
	if ctx != nil {
		if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) && !errors.Is(c, context.DeadlineExceeded) {
			return c.Error()
		}
	}
	return "cancelled by user"
}
