// Shared helpers for mltop's CUDA kernels (bf16/f16 storage, f32 math).
#pragma once
