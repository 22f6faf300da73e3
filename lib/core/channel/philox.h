// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011; the Random123 constants), compiled for the CPU and CUDA alike: a
// counter-based generator, so any draw is a pure function of (counter, key) and
// the simulation stream does not depend on how it is split into batches.
#pragma once

#include "../runtime/host_device.h"

#include <cstdint>

namespace mimo_gpu {
namespace detail {

struct philox_block {
    uint32_t v[4];
};

/// High and low halves of a 32x32-bit product.
MIMO_HD void philox_mul(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo)
{
#if defined(__CUDA_ARCH__)
    hi = __umulhi(a, b);
    lo = a * b;
#else
    const uint64_t product = uint64_t(a) * uint64_t(b);
    hi = uint32_t(product >> 32);
    lo = uint32_t(product);
#endif
}

/// The 128 output bits for `counter` under `key` (10 rounds).
MIMO_HD philox_block philox4x32_10(philox_block counter, uint32_t key0, uint32_t key1)
{
    constexpr uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u; // round multipliers
    constexpr uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u; // Weyl key increments
    uint32_t* c = counter.v;
    MIMO_UNROLL
    for (int round = 0; round < 10; ++round) {
        uint32_t hi0, lo0, hi1, lo1;
        philox_mul(m0, c[0], hi0, lo0);
        philox_mul(m1, c[2], hi1, lo1);
        const uint32_t next[4] = { hi1 ^ c[1] ^ key0, lo1, hi0 ^ c[3] ^ key1, lo0 };
        c[0] = next[0];
        c[1] = next[1];
        c[2] = next[2];
        c[3] = next[3];
        key0 += w0;
        key1 += w1;
    }
    return counter;
}

} // namespace detail
} // namespace mimo_gpu
