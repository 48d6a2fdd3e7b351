//go:build darwin

package mtl

import (
	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
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
	lib, err := purego.Dlopen(iokitPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0
	}
	var (
		serviceMatching       func(name string) objc.ID                                          // CFMutableDictionaryRef IOServiceMatching(const char *)
		getMatchingService    func(port uint32, matching objc.ID) uint32                         // io_service_t IOServiceGetMatchingService(mach_port_t, CFDictionaryRef); consumes matching
		registryEntryProperty func(entry uint32, key objc.ID, alloc objc.ID, opt uint32) objc.ID // CFTypeRef IORegistryEntryCreateCFProperty(io_registry_entry_t, CFStringRef, CFAllocatorRef, IOOptionBits), +1
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
	num := registryEntryProperty(entry, String("gpu-core-count"), 0, 0)
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
