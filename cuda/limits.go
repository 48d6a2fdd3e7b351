package cuda

// Per-block limits every GPU the CUDA backend runs on shares (compute
// capability 7.0 and later). The device's own figures (DeviceInfo) rule a
// run; these are for what is checked without a device (`mltop check`).
const (
	// MaxThreadsPerBlock is the most threads a block may have.
	MaxThreadsPerBlock = 1024
	// SharedPerBlockNoOptIn is the shared memory a block gets without
	// opting in: the cap on static __shared__ arrays, and on dynamic shared
	// memory unless the kernel's max dynamic shared size is raised (the
	// backend raises it at launch, up to the device's opt-in limit).
	SharedPerBlockNoOptIn = 48 << 10
	// MaxSharedPerBlockOptIn is the most shared memory any CUDA GPU gives a
	// block with the opt-in (227 KiB, sm_90); A100 gives 163 KiB.
	MaxSharedPerBlockOptIn = 227 << 10
)
