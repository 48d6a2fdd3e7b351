//go:build darwin

package mtl

import (
	"sync"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

var (
	iokitOnce sync.Once
	iokitErr  error
)

// GPUCoreCount reads the "gpu-core-count" property of the AGXAccelerator
// IORegistry entry; Metal itself does not report the number of cores. It
// returns 0 whenever any step fails (e.g. a VM without AGX). CF objects are
// handled through their toll-free bridged Foundation classes. The C
// functions are the IOKit rows of the cfuncs table.
func GPUCoreCount() int {
	if Load() != nil {
		return 0
	}
	iokitOnce.Do(func() {
		lib, err := purego.Dlopen(iokitPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			err = bindFuncs(lib, "IOKit")
		}
		iokitErr = err
	})
	if iokitErr != nil {
		return 0
	}
	matching := fnIOServiceMatching("AGXAccelerator")
	if matching == 0 {
		return 0
	}
	entry := fnIOServiceGetMatchingService(0, matching) // 0 is kIOMainPortDefault; consumes matching
	if entry == 0 {
		return 0
	}
	defer fnIOObjectRelease(entry)
	num := objc.ID(fnIORegistryEntryCreateCFProperty(entry, uintptr(String("gpu-core-count")), 0, 0)) // +1
	if num == 0 {
		return 0
	}
	defer Object{num}.Release()
	if !responds(num, msgLongLongValue) { // an NSNumber (CFNumber), not data
		return 0
	}
	n := sendT[int64](num, msgLongLongValue)
	if n <= 0 || n > 1024 {
		return 0
	}
	return int(n)
}
