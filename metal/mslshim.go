package metal

import "embed"

// EmulationShim holds the headers of the C++ emulation of the MSL subset
// that metal/mslemu compiles Metal sources against with g++ (metal_stdlib,
// and Metal's other standard headers as stubs that include it): the tests
// run kernels on it, and `mltop check` compiles user kernels with it on
// machines without a Mac.
//
//go:embed testdata/mslemu
var EmulationShim embed.FS

// EmulationShimDir is the folder of the headers inside EmulationShim.
const EmulationShimDir = "testdata/mslemu"
