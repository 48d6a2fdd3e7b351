//go:build !linux

package run

// lowerThreadPriority does nothing where threads have no priority of
// their own through setpriority (macOS applies it to the whole process).
func lowerThreadPriority(int) {}
