// int8 LLR quantisation, one definition for the CPU and the CUDA kernel.
#pragma once

#include "../runtime/host_device.h"

#include <cmath>
#include <cstdint>

namespace mimo_gpu {
namespace detail {

/// q = clamp(round-half-even(L * scale), -127, 127); NaN gives 0.
MIMO_HD int8_t quantize_llr(float llr, float scale)
{
    float v = llr * scale;
    if (!(v == v))
        return 0;
    v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);
    return static_cast<int8_t>(rintf(v));
}

} // namespace detail
} // namespace mimo_gpu
