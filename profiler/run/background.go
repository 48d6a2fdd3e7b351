package run

import "runtime"

// backgroundNice is the nice value of host work that no measurement waits
// on (inputs made ahead, compiles ahead), against 0 for the device
// thread. With several workers on a host (--devices, shards side by side)
// such work of one worker can take every core; the device threads of the
// others and a worker still starting (the driver's cuInit is CPU work:
// 0.3–0.43 s beside busy workers, 0.19–0.23 s beside idle ones, on a
// 4×H200 host) then wait for a core. At a higher nice value the kernel
// scheduler runs them first, and the background work takes what is left.
const backgroundNice = 10

// inBackground lowers the calling goroutine's thread to backgroundNice
// and keeps the goroutine on that thread for the rest of its life, so it
// must be called at the start of a goroutine that does only background
// work: when the goroutine returns, Go ends the thread with it (a thread
// whose priority was lowered is never reused for other goroutines). A
// priority that cannot be lowered (the process already runs above it,
// an OS without per-thread priorities) is left as it is.
func inBackground() {
	runtime.LockOSThread()
	lowerThreadPriority(backgroundNice)
}
