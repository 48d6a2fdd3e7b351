//go:build darwin

package metal

import (
	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

const iokitPath = "/System/Library/Frameworks/IOKit.framework/IOKit"

// gpuCoreCount reads the "gpu-core-count" property of the AGXAccelerator
// IORegistry entry; Metal itself does not report the number of cores. It
// returns 0 whenever any step fails (e.g. a VM without AGX). CF objects are
// handled through their toll-free bridged Foundation classes.
func (r *rt) gpuCoreCount() int {
	lib, err := purego.Dlopen(iokitPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0
	}
	var (
		serviceMatching       func(name string) uintptr                                          // CFMutableDictionaryRef IOServiceMatching(const char *)
		getMatchingService    func(port uint32, matching uintptr) uint32                         // io_service_t IOServiceGetMatchingService(mach_port_t, CFDictionaryRef); consumes matching
		registryEntryProperty func(entry uint32, key objc.ID, alloc uintptr, opt uint32) objc.ID // CFTypeRef IORegistryEntryCreateCFProperty(...), +1
		objectRelease         func(obj uint32) int32                                             // kern_return_t IOObjectRelease(io_object_t)
	)
	purego.RegisterLibFunc(&serviceMatching, lib, "IOServiceMatching")
	purego.RegisterLibFunc(&getMatchingService, lib, "IOServiceGetMatchingService")
	purego.RegisterLibFunc(&registryEntryProperty, lib, "IORegistryEntryCreateCFProperty")
	purego.RegisterLibFunc(&objectRelease, lib, "IOObjectRelease")

	matching := serviceMatching("AGXAccelerator")
	if matching == 0 {
		return 0
	}
	entry := getMatchingService(0, matching) // 0 is kIOMainPortDefault
	if entry == 0 {
		return 0
	}
	defer objectRelease(entry)
	num := registryEntryProperty(entry, r.nsString("gpu-core-count"), 0, 0)
	if num == 0 {
		return 0
	}
	defer r.release(num)
	if !r.responds(num, "longLongValue") { // an NSNumber (CFNumber), not data
		return 0
	}
	n := objc.Send[int64](num, r.sel("longLongValue"))
	if n <= 0 || n > 1024 {
		return 0
	}
	return int(n)
}
