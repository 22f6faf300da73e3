// The per-dimension view of a 3GPP QAM constellation that the detectors use:
// PAM amplitudes, slicing and the bit labels of each level. Passed by value to
// CUDA kernels and used as is by the CPU code, so both slice identically.
#pragma once

#include "../runtime/host_device.h"

#include <cstdint>

namespace mimo_gpu {
class constellation;
namespace detail {

constexpr int k_max_pam_levels = 32; // 1024-QAM

struct pam_table {
    int levels;       // L = sqrt(M)
    int bits_per_dim; // Q / 2
    float scale;      // level i has amplitude scale * (2i - (L - 1))
    float inv_scale;
    uint16_t label[k_max_pam_levels]; // dimension bits of level i, first bit in the top
                                      // position

    MIMO_HD int order() const { return levels * levels; }
    MIMO_HD int bits_per_symbol() const { return 2 * bits_per_dim; }
    MIMO_HD float amplitude(int level) const
    {
        return scale * float(2 * level - (levels - 1));
    }

    /// Nearest level to x; NaN goes to level 0 (the caller flags non-finite problems).
    MIMO_HD int slice(float x) const
    {
        const float g = 0.5f * (x * inv_scale + float(levels - 1));
        if (!(g >= 0.0f))
            return 0;
        if (g >= float(levels) - 0.5f)
            return levels - 1;
        return int(g + 0.5f);
    }

    /// Bit k (0..Q-1, 3GPP order) of the symbol whose I level is li and Q level is lq.
    MIMO_HD int symbol_bit(int li, int lq, int k) const
    {
        const int level = (k % 2 == 0) ? li : lq;
        return (label[level] >> (bits_per_dim - 1 - k / 2)) & 1;
    }
};

pam_table make_pam_table(const constellation& c);

/// The largest LLR magnitude any detector outputs (finite for every N0 the
/// detectors accept; distances that are themselves non-finite erase the problem).
constexpr float k_llr_limit = 1e30f;

/// The one clipping rule of every family's output LLRs: [-clip, clip] for clip > 0,
/// else [-k_llr_limit, k_llr_limit] (a tiny N0 could overflow a finite distance
/// difference to +-Inf). A NaN stays NaN: the families erase what produces one.
MIMO_HD float saturate_llr(float llr, float clip)
{
    const float bound = clip > 0.0f ? clip : k_llr_limit;
    return llr > bound ? bound : (llr < -bound ? -bound : llr);
}

/// Max-log LLR of bit k of one stream from that stream's symbol minima
/// dmin[li * L + lq] = min |y - Hs|^2 over the candidates with that symbol.
/// A side that no candidate reached gives +-clip, or +-unreached when clip == 0.
MIMO_HD float llr_from_symbol_minima(
    const float* dmin, const pam_table& pam, int k, float n0, float clip, float unreached)
{
    const float inf = k_infinity;
    float min0 = inf, min1 = inf;
    const int L = pam.levels;
    for (int li = 0; li < L; ++li)
        for (int lq = 0; lq < L; ++lq) {
            const float d = dmin[li * L + lq];
            if (pam.symbol_bit(li, lq, k))
                min1 = d < min1 ? d : min1;
            else
                min0 = d < min0 ? d : min0;
        }
    const float limit = clip > 0.0f ? clip : unreached;
    if (!(min1 < inf))
        return limit;
    if (!(min0 < inf))
        return -limit;
    return saturate_llr((min1 - min0) / n0, clip);
}

} // namespace detail
} // namespace mimo_gpu
