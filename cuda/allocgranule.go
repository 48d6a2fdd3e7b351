package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// AllocGranuleEnv sets the granule every device allocation's size is
// rounded up to, so that each buffer starts at the start of a page of that
// size instead of wherever the driver sub-allocates a small one. Where a
// small buffer lies decided the level of kernels that hammer it: rmsnorm_bwd's
// 8 KB dW, into which every block adds its partials with atomics, ran at
// 232 or 328 µs by process (one level each, 8 processes), and at 237 µs in
// all 8 with every allocation rounded to 2 MiB; on a 448-spec mixed sweep
// its rows' worst run-to-run difference fell from 77 % to 8 %.
// docs/measuring.md, Where buffers lie.
const AllocGranuleEnv = "MLTOP_CUDA_ALLOC_GRANULE"

// DefaultAllocGranule is the GPU's large page: 2 MiB.
const DefaultAllocGranule = 2 << 20

// AllocGranule reads a setting of AllocGranuleEnv: empty for the default,
// 0 for sizes as asked, else a power of two from 256 bytes to 1 GiB, in
// bytes or with a k or m suffix (1024, 1024²).
func AllocGranule(setting string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(setting))
	if s == "" {
		return DefaultAllocGranule, nil
	}
	mult := int64(1)
	for suf, m := range map[string]int64{"mib": 1 << 20, "m": 1 << 20, "kib": 1 << 10, "k": 1 << 10} {
		if t, ok := strings.CutSuffix(s, suf); ok && strings.TrimSpace(t) != "" {
			if _, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
				s, mult = strings.TrimSpace(t), m
				break
			}
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	g := n * mult
	if err != nil || n < 0 || (g != 0 && (g < 256 || g > 1<<30 || g&(g-1) != 0)) {
		return 0, fmt.Errorf("%s=%q is not 0 or a power of two from 256 bytes to 1 GiB: use e.g. 2m (the default) or 0 for sizes as asked", AllocGranuleEnv, setting)
	}
	return g, nil
}

// roundAlloc is n rounded up to a multiple of granule (0: n).
func roundAlloc(n, granule int64) int64 {
	if granule <= 0 {
		return n
	}
	return (n + granule - 1) / granule * granule
}

// allocGranule is the process's granule, read once; a bad setting is the
// default (WarnSettings says so in the parent).
var allocGranule = sync.OnceValue(func() int64 {
	g, err := AllocGranule(os.Getenv(AllocGranuleEnv))
	if err != nil {
		return DefaultAllocGranule
	}
	return g
})
