//go:build !unix

package run

import "time"

// acquireStartSlot: without flock(2) (Windows) workers start without
// waiting their turn.
func acquireStartSlot(stop <-chan struct{}, n int, wait time.Duration) (release func()) {
	return func() {}
}
