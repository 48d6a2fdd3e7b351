// sm_60_atomic_functions.h of the CUDA emulation: everything is in cuda_emu.h.
#pragma once
#include <cuda_emu.h>
