package metal

import "embed"

// EmulationShim holds the headers (metal_stdlib, metal_simdgroup,
// metal_simdgroup_matrix) of the C++ emulation of the MSL subset that
// metal/mslemu compiles Metal sources against with g++: the tests run
// kernels on it, and `mltop check` compiles user kernels with it on
// machines without a Mac.
//
//go:embed testdata/mslemu/metal_stdlib testdata/mslemu/metal_simdgroup testdata/mslemu/metal_simdgroup_matrix
var EmulationShim embed.FS

// EmulationShimDir is the folder of the headers inside EmulationShim.
const EmulationShimDir = "testdata/mslemu"
