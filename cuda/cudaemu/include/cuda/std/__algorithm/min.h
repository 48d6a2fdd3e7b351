// mltop CUDA emulation: std::min from <algorithm> (see ../mltop_std.h).
#pragma once
#include <algorithm>
#include "../mltop_std.h"
