// Cooperative copy of a contiguous range into shared memory by a whole block.
// Inputs may be pinned host memory read over PCIe (zero copy), where 16-byte
// loads keep four times more bytes in flight than 4-byte ones.
#pragma once

#include <cstdint>

namespace mimo_gpu {
namespace detail {

__device__ inline void block_copy_to_shared(float* __restrict__ dst, const float* __restrict__ src, int count)
{
    const bool vectorisable = ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 15) == 0;
    int done = 0;
    if (vectorisable) {
        const int vectors = count / 4;
        const float4* s4 = reinterpret_cast<const float4*>(src);
        float4* d4 = reinterpret_cast<float4*>(dst);
#pragma unroll 4
        for (int i = threadIdx.x; i < vectors; i += blockDim.x)
            d4[i] = s4[i];
        done = vectors * 4;
    }
    for (int i = done + threadIdx.x; i < count; i += blockDim.x)
        dst[i] = src[i];
}

} // namespace detail
} // namespace mimo_gpu
