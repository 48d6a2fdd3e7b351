package run

import "golang.org/x/sys/unix"

// hostMemory on macOS is the installed memory (hw.memsize): the system
// compresses and swaps rather than report a fixed "available" figure.
func hostMemory() (int64, string) {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, ""
	}
	return int64(n), "hw.memsize"
}
