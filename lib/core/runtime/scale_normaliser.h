// Scale invariance (issue 23): detection of (aH, ay, a^2 N0) is detection of
// (H, y, N0). Where a family's float products of H would overflow or underflow
// (Gram matrices, their inverses, CG inner products), it first multiplies H and
// y by a power of two that brings max |H| near 1, and N0 by its square: exact in
// float, so nothing else changes.
#pragma once

#include "host_device.h"

#include <cstdint>
#include <cstring>

namespace mimo_gpu {
namespace detail {

/// 2^-e for the exponent e of `max_abs` (max_abs * 2^-e in [0.5, 1)), e clamped to
/// [-126, 126] so the factor and its square's effect stay normal floats; 1 for 0
/// or a non-finite max_abs (the finiteness checks report those).
MIMO_HD float normalising_scale(float max_abs)
{
    uint32_t bits;
    memcpy(&bits, &max_abs, sizeof bits);
    const int biased = int((bits >> 23) & 0xffu);
    if (!(max_abs > 0.0f) || biased == 0xff)
        return 1.0f;
    // frexp's exponent: biased - 126 for normal numbers; denormals are below 2^-126.
    int e = biased == 0 ? -126 : biased - 126;
    e = e < -126 ? -126 : (e > 126 ? 126 : e);
    const uint32_t scale_bits = uint32_t(127 - e) << 23; // 2^-e
    float scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return scale;
}

/// The larger of |re| and |im| over n complex values stored as 2n floats, read at
/// [i * pitch].
MIMO_HD float max_abs_component(const float* x, int n2, int pitch = 1)
{
    float m = 0.0f;
    for (int i = 0; i < n2; ++i) {
        const float v = x[i * pitch] < 0.0f ? -x[i * pitch] : x[i * pitch];
        m = v > m ? v : m;
    }
    return m;
}

} // namespace detail
} // namespace mimo_gpu
