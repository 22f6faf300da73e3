// Warp-wide reductions shared by the CUDA kernels (include from .cu files only).
// Every lane of a full warp calls them and every lane gets the result.
#pragma once

namespace mimo_gpu {
namespace detail {

/// The sum over the warp by a butterfly in a fixed order (offsets 16, 8, .., 1),
/// so that every lane, and every run, gets the same float bits.
__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/// redux.sync where the GPU has it.
__device__ __forceinline__ unsigned int warp_sum(unsigned int v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xffffffffu, v);
#else
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
#endif
}

/// redux.sync where the GPU has it.
__device__ __forceinline__ unsigned int warp_min(unsigned int v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_min_sync(0xffffffffu, v);
#else
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned int u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u < v ? u : v;
    }
    return v;
#endif
}

} // namespace detail
} // namespace mimo_gpu
