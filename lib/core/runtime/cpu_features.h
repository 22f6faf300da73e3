// What the processor runs, for the CPU code built for an instruction set beyond
// the baseline (the turbo window, the LDPC min-sum layer, the frame search's
// terms: each in a file of its own under a target pragma, called only where
// this says yes). Only used where CMake found an x86-64 compiler with -mavx2
// (MIMO_GPU_*_AVX2).
#pragma once

namespace mimo_gpu {
namespace detail {

/// Whether this processor runs AVX2 code (asked once a process).
inline bool cpu_has_avx2()
{
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

/// Whether it runs AVX2 code with F16C's half-precision conversions.
inline bool cpu_has_avx2_f16c()
{
    static const bool has = cpu_has_avx2() && __builtin_cpu_supports("f16c");
    return has;
}

} // namespace detail
} // namespace mimo_gpu
