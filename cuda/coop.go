package cuda

import "fmt"

// coresidentError refuses a cooperative launch of grid whose blocks are
// not all resident at once: blocksPerSM (the driver's occupancy for the
// launch's threads and shared memory; limiter names the resource that
// binds) × sms. A grid-wide barrier in such a grid waits for blocks that
// cannot start until the waiting ones finish: a hang, or the driver's
// CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE. nil when the grid fits.
func coresidentError(name, device string, grid [3]int, threads, blocksPerSM, sms int, limiter string) error {
	blocks := int64(grid[0]) * int64(grid[1]) * int64(grid[2])
	most := int64(blocksPerSM) * int64(sms)
	if blocks <= most {
		return nil
	}
	fix := "write the grid to fit, e.g. `grid: [\"min(cdiv(N, 256), max_coresident)\"]` with a grid-stride loop in the kernel"
	if limiter == "registers" {
		need := (blocks + int64(sms) - 1) / int64(max(sms, 1)) // blocks per SM this grid needs
		fix += fmt.Sprintf(", or cap the kernel's registers so that more blocks fit: __launch_bounds__(%d, %d)", threads, need)
	} else if limiter != "" && limiter != "unknown" {
		fix += ", or lower what binds (" + limiter + ")"
	}
	if blocksPerSM == 0 {
		return fmt.Errorf("dispatch %s is cooperative, but not one block of %d threads fits on an SM of %s (limited by %s): lower the threads or the shared memory", name, threads, device, limiter)
	}
	return fmt.Errorf("dispatch %s is cooperative, but its grid %v is %d blocks, more than the %d resident at once on %s (%d blocks of %d threads per SM, limited by %s, × %d SMs): its grid-wide barrier would never be reached by all of them; %s",
		name, grid, blocks, most, device, blocksPerSM, threads, limiter, sms, fix)
}
