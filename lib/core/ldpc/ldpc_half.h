// IEEE half precision on the CPU for the min-sum decoders: values kept in
// floats that are always binary16 numbers, each operation done in float and
// rounded to half (ties to even, subnormals kept), which is what the GPU's
// half2 instructions compute. ldpc_engine.h says why the two agree.
#pragma once

#include "ldpc_engine.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mimo_gpu {
namespace detail {

/// x (|x| < 65520) rounded to the nearest binary16 value, as a float.
inline float ldpc_round_half(float x)
{
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    const uint32_t sign = u & 0x80000000u, magnitude = u & 0x7fffffffu;
    if (magnitude >= 0x38800000u) { // a normal half (>= 2^-14): keep 10 of 23 bits
        u = sign | ((magnitude + 0x0fffu + ((magnitude >> 13) & 1u)) & ~0x1fffu);
        float y;
        std::memcpy(&y, &u, sizeof y);
        return y;
    }
    // a subnormal half or zero: a multiple of 2^-24, rounded to even
    const float q = std::nearbyint(std::fabs(x) * 16777216.0f) * k_ldpc_half_tiny;
    return sign ? -q : q;
}

/// An input LLR as the min-sum decoders take it: bounded to the half limit and
/// rounded; a non-zero value too small for half becomes +-2^-24; -0 becomes
/// +0, so no LLR is ever -0 (Q = L - R and L = Q + R then never are), which
/// keeps a layer run only for the other block of a GPU thread's pair from
/// turning a -0 into +0 there.
inline float ldpc_half_input(float x)
{
    if (x == 0.0f)
        return 0.0f;
    x = x > k_ldpc_half_limit ? k_ldpc_half_limit
                              : (x < -k_ldpc_half_limit ? -k_ldpc_half_limit : x);
    const float h = ldpc_round_half(x);
    if (h == 0.0f && x != 0.0f)
        return x < 0.0f ? -k_ldpc_half_tiny : k_ldpc_half_tiny;
    return h;
}

inline float ldpc_half_clamp(float x)
{
    return x > k_ldpc_half_limit ? k_ldpc_half_limit
                                 : (x < -k_ldpc_half_limit ? -k_ldpc_half_limit : x);
}

/// The two magnitudes a min-sum check sends (to its least edge, to the
/// others) from the least two |Q|, rounded as the GPU computes them.
inline float ldpc_half_magnitude(float least, const ldpc_decoder_config& rule)
{
    float m;
    if (rule.algorithm == ldpc_algorithm::normalized_min_sum)
        m = ldpc_round_half(ldpc_round_half(rule.scale) * least);
    else {
        m = ldpc_round_half(least - ldpc_round_half(rule.offset));
        m = m > 0.0f ? m : 0.0f;
    }
    return m < k_ldpc_half_limit ? m : k_ldpc_half_limit;
}

} // namespace detail
} // namespace mimo_gpu
