// cooperative_groups/scan.h of the CUDA emulation: in cooperative_groups.h.
#pragma once
#include <cooperative_groups.h>
