// Marks functions compiled for both the CPU implementation and the CUDA kernels,
// so each per-problem computation is written once.
#pragma once

#if defined(__CUDACC__)
#define MIMO_HD __host__ __device__ __forceinline__
#else
#define MIMO_HD inline
#endif

// Loops over antennas have compile-time bounds; unrolling keeps the per-problem
// arrays in registers on the GPU and lets the CPU compiler vectorise.
#if defined(__CUDACC__)
#define MIMO_UNROLL _Pragma("unroll")
#else
#define MIMO_UNROLL _Pragma("GCC unroll 16")
#endif

#include <limits>

namespace mimo_gpu {
namespace detail {
/// +Inf, usable in host and device code alike (constexpr).
constexpr float k_infinity = std::numeric_limits<float>::infinity();
} // namespace detail
} // namespace mimo_gpu
