package run

import "syscall"

// lowerThreadPriority sets the calling thread's nice value (on Linux,
// setpriority with a thread id applies to that thread alone). Raising
// nice needs no privilege; an error (the thread is already nicer) leaves
// it as it is.
func lowerThreadPriority(nice int) {
	tid := syscall.Gettid()
	// getpriority(2) returns 20 − nice on Linux.
	if cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-cur >= nice {
		return
	}
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
}
