// Shared helpers for mltop's Metal kernels (bf16/f16 storage, f32 math).
#pragma once
#include <metal_stdlib>
using namespace metal;
