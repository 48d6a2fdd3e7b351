package cuda

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LocalReserveEnv sets how much local memory per thread (register spills,
// local arrays, the call stack) a CUDA worker reserves as the first
// allocation of its context. The driver otherwise grows that memory at the
// first launch of a kernel that needs more than it holds, to the largest
// need so far, wherever the process's earlier allocations left room: a
// spilling kernel's time moved with that size and place (up to 4.7% for a
// 2 KB spill, each level repeated by every process that took the same
// steps), and the growth waited up to 250 ms behind another GPU's worker
// starting (the driver serialises them). The reserve gives every worker
// one size and place of local memory, before anything else.
// docs/measuring.md, Local memory.
const LocalReserveEnv = "MLTOP_CUDA_LOCAL_RESERVE"

// DefaultLocalReserve covers the spills of the built-in kernels' widest
// tiles (attn_fwd D=128 at one warp per tile: 5.8 KB per thread).
const DefaultLocalReserve = 8 << 10

// localReserveShare is the most of the device's memory the reserve takes:
// the reservation is per thread for every thread the device can hold at
// once (threads per SM × SMs), 2.2 GB at 8 KB on a 132-SM Hopper.
const localReserveShare = 0.02

// LocalReserve is the local memory per thread to reserve for a device of
// memBytes holding residentThreads threads at once: setting (the
// environment's value; empty for the default), lowered to the largest
// multiple of 1 KiB whose reservation stays within localReserveShare of the
// device's memory. 0: reserve nothing (set to 0, or a device too small).
func LocalReserve(setting string, memBytes int64, residentThreads int) (int, error) {
	want := DefaultLocalReserve
	if s := strings.TrimSpace(setting); s != "" {
		n, err := parseByteCount(s)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not a byte count per thread: use e.g. 8192 or 16k, or 0 to reserve nothing", LocalReserveEnv, setting)
		}
		want = n
	}
	if want <= 0 || memBytes <= 0 || residentThreads <= 0 {
		return 0, nil
	}
	most := int64(float64(memBytes)*localReserveShare) / int64(residentThreads)
	if int64(want) > most {
		want = int(most)
	}
	return want &^ (1<<10 - 1), nil
}

// parseByteCount reads "8192", "8k" or "8KiB" (k and KiB are 1024).
func parseByteCount(s string) (int, error) {
	t := strings.ToLower(s)
	mult := 1
	for _, suf := range []string{"kib", "kb", "k"} {
		if strings.HasSuffix(t, suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, suf)), 1<<10
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("not a byte count from 0 to 1 MiB: %q", s)
	}
	return n * mult, nil
}

// WarnSettings says on w, once per process, when LocalReserveEnv is set to
// something that is not a byte count, or AllocGranuleEnv to something that
// is not a granule. The parent calls it, where the
// warning is seen: a worker uses the default and says so only in its
// device notes.
func WarnSettings(w io.Writer) {
	settingsWarning.Do(func() {
		if _, err := LocalReserve(os.Getenv(LocalReserveEnv), 1<<40, 1); err != nil {
			fmt.Fprintf(w, "mltop: %v; the default %d is reserved\n", err, DefaultLocalReserve)
		}
		if _, err := AllocGranule(os.Getenv(AllocGranuleEnv)); err != nil {
			fmt.Fprintf(w, "mltop: %v; the default %d is used\n", err, DefaultAllocGranule)
		}
	})
}

var settingsWarning sync.Once
