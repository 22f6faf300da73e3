// Per-problem steps of the fixed-complexity sphere decoders (paper:
// fsd-sphere-decoder-gpu, sections 3-5) on one problem's [R | Q^T y] block,
// shared by the CPU engine and the CUDA kernels (the ordering and QR are
// sphere/sphere_item.h's, shared with K-best): a full-expansion path completed by SIC,
// and the SFSD list extension.
//
// Positions: stream perm[j] sits at position j of the QR; the tree's top is
// position NT-1, real rows 2j (I) and 2j+1 (Q). The `full` top positions are
// fully expanded (FE), the others follow successive interference cancellation
// (SE): the nearest constellation point to their estimate.
#pragma once

#include "../../runtime/host_device.h"
#include "../pam_table.h"
#include "../sphere/sphere_item.h"

namespace mimo_gpu {
namespace detail {

/// The level nearest to x among those whose dimension bit `kd` differs from
/// that of level `base` (the SFSD counter-hypothesis of one bit).
MIMO_HD int nearest_level_with_other_bit(const pam_table& pam, float x, int base, int kd)
{
    const int shift = pam.bits_per_dim - 1 - kd;
    const int other = ((pam.label[base] >> shift) & 1) ^ 1;
    int best = -1;
    float best_d = 0.0f;
    for (int l = 0; l < pam.levels; ++l)
        if (((pam.label[l] >> shift) & 1) == other) {
            const float d = (x - pam.amplitude(l)) * (x - pam.amplitude(l));
            if (best < 0 || d < best_d) {
                best = l;
                best_d = d;
            }
        }
    return best;
}

/// One FSD path: the FE positions take the symbols of `path` (base-M digits,
/// position NT-1 the lowest digit; symbol s is I level s / L, Q level s % L),
/// the others SIC. Writes every real row's level, returns |y^ - R s|^2.
template <int NT>
MIMO_HD float
fsd_path(const float* E, int full, int path, const pam_table& pam, int (&level)[2 * NT])
{
    constexpr int COLS = 2 * NT, W = COLS + 1;
    float p[COLS];
    float d = 0.0f;
    int digits = path;
    MIMO_UNROLL
    for (int i = COLS - 1; i >= 0; --i) {
        float b = E[i * W + COLS];
        MIMO_UNROLL
        for (int j = COLS - 1; j > i; --j)
            b -= E[i * W + j] * p[j];
        const float rii = E[i * W + i];
        if (i / 2 >= NT - full) {
            const int symbol = pam.symbol_of(digits);
            level[i] = (i % 2 == 0) ? pam.i_level(symbol) : pam.q_level(symbol);
            if (i % 2 == 0)
                digits = pam.parent_of(digits); // both rows of this position done
        } else {
            level[i] = pam.slice(b / rii);
        }
        p[i] = pam.amplitude(level[i]);
        const float e = b - rii * p[i];
        d += e * e;
    }
    return d;
}

/// The SFSD list extension (section 5): the levels of `base` above position
/// `pos`, at `pos` the nearest symbol whose bit k (3GPP order: even k in I, odd
/// in Q) differs from base's, SIC below. Choosing the nearest such symbol
/// (rather than base's symbol with the bit negated, as the paper does) finds
/// the best counter-hypothesis of that level; for nt = 2 with every path
/// extended it makes the list's LLRs exact max-log.
template <int NT>
MIMO_HD float sfsd_extension(const float* E,
                             const int (&base)[2 * NT],
                             int pos,
                             int k,
                             const pam_table& pam,
                             int (&level)[2 * NT])
{
    constexpr int COLS = 2 * NT, W = COLS + 1;
    const int flip_row = 2 * pos + (k % 2);
    float p[COLS];
    float d = 0.0f;
    MIMO_UNROLL
    for (int i = COLS - 1; i >= 0; --i) {
        float b = E[i * W + COLS];
        MIMO_UNROLL
        for (int j = COLS - 1; j > i; --j)
            b -= E[i * W + j] * p[j];
        const float rii = E[i * W + i];
        if (i / 2 > pos)
            level[i] = base[i];
        else if (i == flip_row)
            level[i] = nearest_level_with_other_bit(pam, b / rii, base[i], k / 2);
        else
            level[i] = pam.slice(b / rii);
        p[i] = pam.amplitude(level[i]);
        const float e = b - rii * p[i];
        d += e * e;
    }
    return d;
}

/// Paths of the full expansion: M^full.
MIMO_HD int fsd_paths(int M, int full)
{
    int n = 1;
    for (int i = 0; i < full; ++i)
        n *= M;
    return n;
}

/// The paper's rule T >= sqrt(nt) - 1 (full diversity), at least one level.
inline int fsd_default_full_levels(int nt)
{
    int t = 1;
    while ((t + 1) * (t + 1) < nt) // the smallest t >= 1 with (t + 1)^2 >= nt
        ++t;
    return t;
}

/// The `count` best paths by (distance, index), in that order, into `chosen`
/// (a fixed tie rule, so the CPU and CUDA engines pick the same ones): each
/// pick is the smallest (distance, index) pair above the previous pick.
MIMO_HD void fsd_select_best(const float* dist, int paths, int count, int* chosen)
{
    for (int n = 0; n < count; ++n) {
        int best = -1;
        for (int c = 0; c < paths; ++c) {
            if (n > 0) {
                const float dp = dist[chosen[n - 1]];
                if (!(dist[c] > dp || (dist[c] == dp && c > chosen[n - 1])))
                    continue; // at or before the previous pick
            }
            if (best < 0 || dist[c] < dist[best])
                best = c;
        }
        chosen[n] =
            best < 0 ? 0 : best; // only non-finite distances left: the problem is flagged
    }
}

/// Feeds a complete candidate into per-stream symbol minima: keep_min(t * M + s, d).
template <int NT, typename KeepMin>
MIMO_HD void fsd_record(const int (&level)[2 * NT],
                        const int (&perm)[NT],
                        float d,
                        const pam_table& pam,
                        KeepMin&& keep_min)
{
    MIMO_UNROLL
    for (int j = 0; j < NT; ++j)
        keep_min(perm[j] * pam.order() + level[2 * j] * pam.levels + level[2 * j + 1], d);
}

/// Hard-decision LLRs of a path: +-clip by its bits, stream perm[j]'s at [perm[j] * Q,
/// ...).
template <int NT>
MIMO_HD void fsd_hard_llrs(const int (&level)[2 * NT],
                           const int (&perm)[NT],
                           const pam_table& pam,
                           float clip,
                           float* llr)
{
    const int Q = pam.bits_per_symbol();
    MIMO_UNROLL
    for (int j = 0; j < NT; ++j)
        for (int k = 0; k < Q; ++k)
            llr[perm[j] * Q + k] =
                pam.symbol_bit(level[2 * j], level[2 * j + 1], k) ? -clip : clip;
}

} // namespace detail
} // namespace mimo_gpu
