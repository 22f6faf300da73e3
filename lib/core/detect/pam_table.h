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
    /// Symbol s = I * L + Q split into its levels, and a child index c = a * M +
    /// s into its parent a and symbol s (non-negative indices; L and M are
    /// powers of two): shifts and masks, not the runtime integer divisions
    /// (~20 instructions each) that the GPU searches spent most of a
    /// candidate's integer work on.
    MIMO_HD int i_level(int s) const { return s >> bits_per_dim; }
    MIMO_HD int q_level(int s) const { return s & (levels - 1); }
    MIMO_HD int parent_of(int c) const { return c >> (2 * bits_per_dim); }
    MIMO_HD int symbol_of(int c) const { return c & (order() - 1); }
    MIMO_HD float amplitude(int level) const
    {
        return scale * float(2 * level - (levels - 1));
    }

    /// Nearest level to x; NaN goes to level 0 (the caller flags non-finite problems).
    /// Clamped before rounding, without branches (the N-way search slices every
    /// level of every candidate): g in [0, L-1] rounds as int(g + 0.5), g above
    /// L-1 gives L-1, and g below 0 or NaN gives 0 (selects on the CPU, where
    /// fmaxf/fminf are library calls; the GPU's fminf gives the same level).
    MIMO_HD int slice(float x) const
    {
        const float g = 0.5f * (x * inv_scale + float(levels - 1));
        const float top = float(levels - 1);
        const float low = g > 0.0f ? g : 0.0f; // NaN: 0
#ifdef __CUDA_ARCH__
        // low is never NaN, so fminf is the select below in one instruction.
        return int(fminf(low, top) + 0.5f);
#else
        return int((low < top ? low : top) + 0.5f);
#endif
    }

    /// Bit k (0..Q-1, 3GPP order) of a symbol whose level on bit k's axis (k % 2:
    /// even bits the I level's, odd bits the Q level's) is `level`.
    MIMO_HD int level_bit(int level, int k) const
    {
        return (label[level] >> (bits_per_dim - 1 - k / 2)) & 1;
    }
    /// Bit k (0..Q-1, 3GPP order) of the symbol whose I level is li and Q level is lq.
    MIMO_HD int symbol_bit(int li, int lq, int k) const
    {
        return level_bit(k % 2 == 0 ? li : lq, k);
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

// A QAM bit is a bit of one axis's level (pam_table::symbol_bit: even bits the I
// level's, odd bits the Q level's), so the minimum over the symbols whose bit k
// is b is the minimum over the levels of that axis whose label bit is b of
// the axis minima: each level's minimum over the other axis. Minima of the same
// non-negative distances in another order: the same floats.

/// log2 L where the caller knows it at compile time (the GPU kernels templated
/// on the modulation: the loops unroll and the labels become constants), else 0
/// (read from the pam_table). The values are the same either way.
template <int LBITS>
MIMO_HD int pam_levels(const pam_table& pam)
{
    return LBITS > 0 ? 1 << LBITS : pam.levels;
}

/// The minimum of dmin[li * L + lq] over the other axis, at `level` of `axis`
/// (0: I, the minimum over lq at li = level; 1: Q, over li at lq = level).
template <int LBITS = 0>
MIMO_HD float axis_minimum(const float* dmin, const pam_table& pam, int axis, int level)
{
    const int L = pam_levels<LBITS>(pam);
    const float inf = k_infinity;
    // Row `level` (I) or column `level` (Q): a start and a stride, chosen once.
    const float* from = dmin + (axis == 0 ? level * L : level);
    const int stride = axis == 0 ? 1 : L;
    float m = inf;
    MIMO_UNROLL
    for (int other = 0; other < L; ++other) {
        const float d = from[other * stride];
        m = d < m ? d : m;
    }
    return m;
}

/// The max-log LLR from the smallest distances with the bit 0 and with the bit
/// 1: a side that no candidate reached gives +-clip, or +-unreached when clip == 0.
MIMO_HD float
llr_from_side_minima(float min0, float min1, float n0, float clip, float unreached)
{
    const float inf = k_infinity;
    const float limit = clip > 0.0f ? clip : unreached;
    if (!(min1 < inf))
        return limit;
    if (!(min0 < inf))
        return -limit;
    return saturate_llr((min1 - min0) / n0, clip);
}

/// The smallest level_minimum(level) over the levels of bit k's axis whose label
/// bit is 0 (min0) and 1 (min1), by selects (LBITS: as pam_levels). The one
/// place the detectors split a bit's levels into its two sides.
template <int LBITS = 0, typename LevelMinimum>
MIMO_HD void bit_side_minima(
    const pam_table& pam, int k, LevelMinimum&& level_minimum, float& min0, float& min1)
{
    const float inf = k_infinity;
    const int L = pam_levels<LBITS>(pam);
    min0 = inf;
    min1 = inf;
    MIMO_UNROLL
    for (int level = 0; level < L; ++level) {
        const float d = level_minimum(level);
        const bool one = pam.level_bit(level, k);
        const float m = one ? min1 : min0;
        const float smaller = d < m ? d : m;
        min1 = one ? smaller : min1;
        min0 = one ? min0 : smaller;
    }
}

/// Max-log LLR of bit k from the minima of its axis's levels, level_minimum(level)
/// for each of the L levels (LBITS: as pam_levels).
template <int LBITS = 0, typename LevelMinimum>
MIMO_HD float llr_from_level_minima(const pam_table& pam,
                                    int k,
                                    float n0,
                                    float clip,
                                    float unreached,
                                    LevelMinimum&& level_minimum)
{
    float min0, min1;
    bit_side_minima<LBITS>(pam, k, level_minimum, min0, min1);
    return llr_from_side_minima(min0, min1, n0, clip, unreached);
}

/// Max-log LLR of bit k of one stream from its axis minima: amin[level] of the
/// bit's axis (k % 2) for each of the L levels (LBITS: as pam_levels).
template <int LBITS = 0>
MIMO_HD float llr_from_axis_minima(
    const float* amin, const pam_table& pam, int k, float n0, float clip, float unreached)
{
    return llr_from_level_minima<LBITS>(
        pam, k, n0, clip, unreached, [amin](int level) { return amin[level]; });
}

/// Max-log LLR of bit k of one stream from that stream's symbol minima
/// dmin[li * L + lq] = min |y - Hs|^2 over the candidates with that symbol
/// (the axis minima computed on the way).
MIMO_HD float llr_from_symbol_minima(
    const float* dmin, const pam_table& pam, int k, float n0, float clip, float unreached)
{
    return llr_from_level_minima(pam, k, n0, clip, unreached, [&](int level) {
        return axis_minimum(dmin, pam, k % 2, level);
    });
}

/// The Q LLRs of one stream from its symbol minima into llr[0..Q): the 2 L
/// axis minima once, then each bit from its axis's (llr_from_symbol_minima's
/// values, with 2 L^2 + Q L steps instead of Q L^2).
MIMO_HD void llrs_from_symbol_minima(const float* dmin,
                                     const pam_table& pam,
                                     float n0,
                                     float clip,
                                     float unreached,
                                     float* llr)
{
    float amin[2][k_max_pam_levels];
    for (int axis = 0; axis < 2; ++axis)
        for (int level = 0; level < pam.levels; ++level)
            amin[axis][level] = axis_minimum(dmin, pam, axis, level);
    for (int k = 0; k < pam.bits_per_symbol(); ++k)
        llr[k] = llr_from_axis_minima(amin[k % 2], pam, k, n0, clip, unreached);
}

#ifdef __CUDACC__
/// A thread block's LLRs from its problems' symbol minima in shared memory,
/// llrs_from_symbol_minima's values spread over the block: each table's 2 L
/// axis minima once, a thread each, then each LLR from its axis's L of them.
/// dmin: [problem][stream][M]; amin: shared scratch of problems * nt * 2 * L
/// floats; llr: the first problem's nt * Q LLRs, the others after it. Every
/// thread of the block calls it (one barrier inside), after a barrier that
/// follows the last write to dmin; amin may be reused only after another.
/// NT and LBITS: the streams and log2 L, known to the callers' kernels at
/// compile time (the indices split by shifts and constant divisions, the loops
/// unroll).
template <int NT, int LBITS>
__device__ inline void block_llrs_from_symbol_minima(const float* dmin,
                                                     float* amin,
                                                     int problems,
                                                     const pam_table& pam,
                                                     float n0,
                                                     float clip,
                                                     float unreached,
                                                     float* __restrict__ llr)
{
    constexpr int nt = NT, shift = LBITS, L = 1 << shift, M = L * L; // L = 2^shift
    for (int i = threadIdx.x; i < problems * nt * 2 * L; i += blockDim.x) {
        const int table = i >> (shift + 1), axis = (i >> shift) & 1;
        amin[i] = axis_minimum<LBITS>(dmin + table * M, pam, axis, i & (L - 1));
    }
    __syncthreads();
    constexpr int Q = 2 * shift, per_problem = nt * Q;
    for (int i = threadIdx.x; i < problems * per_problem; i += blockDim.x) {
        const int p = i / per_problem, b = i % per_problem, k = b % Q;
        llr[i] = llr_from_axis_minima<LBITS>(
            amin + ((p * nt + b / Q) * 2 + k % 2) * L, pam, k, n0, clip, unreached);
    }
}
#endif

/// The a-priori term of symbol v of a stream whose Q a-priori LLRs are
/// `priors` (L = ln P(0)/P(1)), in distance units: n0 times -ln P(v) up to a
/// constant, the constant chosen so that the term is never negative (each bit
/// against its prior's sign costs |L|, else 0), so metrics stay non-negative
/// (the CUDA kernels' atomicMin on the float's bits needs that). CPU and CUDA
/// sum in the same order.
MIMO_HD float
symbol_prior_cost(const float* priors, const pam_table& pam, int v, float n0)
{
    const int L = pam.levels, Q = pam.bits_per_symbol();
    float c = 0.0f;
    for (int k = 0; k < Q; ++k) {
        const float l = priors[k];
        const bool unlikely = pam.symbol_bit(v / L, v % L, k) != (l < 0.0f);
        c += unlikely ? (l < 0.0f ? -l : l) : 0.0f;
    }
    return n0 * c;
}

/// Whether every a-priori LLR of a problem is finite (else it is erased).
MIMO_HD bool priors_finite(const float* priors, int count)
{
    bool finite = true;
    for (int i = 0; i < count; ++i)
        finite &= priors[i] - priors[i] == 0.0f; // NaN and infinities fail
    return finite;
}

} // namespace detail
} // namespace mimo_gpu
