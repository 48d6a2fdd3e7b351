//go:build !linux && !darwin

package run

// hostMemory is unknown here: no host check.
func hostMemory() (int64, string) { return 0, "" }
