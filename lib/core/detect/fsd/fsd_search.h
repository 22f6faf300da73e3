// Per-problem steps of the fixed-complexity sphere decoders (paper:
// fsd-sphere-decoder-gpu, sections 3-5) on one problem's [R | Q^T y] block,
// shared by the CPU engine and the CUDA kernels: the FSD channel ordering, a
// full-expansion path completed by SIC, and the SFSD list extension.
//
// Positions: stream perm[j] sits at position j of the QR; the tree's top is
// position NT-1, real rows 2j (I) and 2j+1 (Q). The `full` top positions are
// fully expanded (FE), the others follow successive interference cancellation
// (SE): the nearest constellation point to their estimate.
#pragma once

#include "../../qr/mgs_qr.h"
#include "../../runtime/host_device.h"
#include "../../runtime/scale_normaliser.h"
#include "../pam_table.h"

namespace mimo_gpu {
namespace detail {

/// The FSD ordering (the paper's reference [7]): from the top position down,
/// the `full` FE positions take the weakest remaining stream (the largest
/// diagonal element of (H_S^H H_S)^-1 over the remaining columns S), the SE
/// positions the strongest. full = 0 gives the V-BLAST order (strongest first).
/// (H^H H)^-1 is computed once (Gauss-Jordan, no pivoting: the Gram matrix of a
/// full-rank H is Hermitian positive definite); removing a stream is a Schur
/// complement update of it. Every loop has compile-time bounds, so on the GPU
/// it all stays in registers. A singular or non-finite H leaves an arbitrary
/// order; the QR flags the problem. Element i of H is read at [i * PITCH]
/// (problems interleaved in shared memory, as for mgs_qr_permuted). The order
/// does not depend on H's scale: H is first brought near 1 by a power of two
/// (the pivots' squares overflowed at |H| >= 1e10 and underflowed at <= 1e-10).
template <int NR, int NT, int PITCH = 1>
MIMO_HD void fsd_order(const float* H, int full, int (&perm)[NT])
{
    const float scale = normalising_scale(max_abs_component(H, 2 * NR * NT, PITCH));
    float ar[NT][2 * NT], ai[NT][2 * NT]; // [G | I] -> [I | G^-1]
MIMO_UNROLL
    for (int a = 0; a < NT; ++a)
MIMO_UNROLL
        for (int b = 0; b < NT; ++b) {
            float gr = 0.0f, gi = 0.0f;
MIMO_UNROLL
            for (int r = 0; r < NR; ++r) {
                const float xr = scale * H[PITCH * (2 * (r * NT + a))], xi = scale * H[PITCH * (2 * (r * NT + a) + 1)];
                const float zr = scale * H[PITCH * (2 * (r * NT + b))], zi = scale * H[PITCH * (2 * (r * NT + b) + 1)];
                gr += xr * zr + xi * zi; // conj(x) z
                gi += xr * zi - xi * zr;
            }
            ar[a][b] = gr;
            ai[a][b] = gi;
            ar[a][NT + b] = a == b ? 1.0f : 0.0f;
            ai[a][NT + b] = 0.0f;
        }
MIMO_UNROLL
    for (int c = 0; c < NT; ++c) {
        const float pr = ar[c][c], pi = ai[c][c], n2 = pr * pr + pi * pi;
        const float ir = pr / n2, ii = -pi / n2; // 1 / pivot (NaN for a singular H: order arbitrary)
MIMO_UNROLL
        for (int b = 0; b < 2 * NT; ++b) {
            const float xr = ar[c][b], xi = ai[c][b];
            ar[c][b] = xr * ir - xi * ii;
            ai[c][b] = xr * ii + xi * ir;
        }
MIMO_UNROLL
        for (int a = 0; a < NT; ++a) {
            if (a == c)
                continue;
            const float fr = ar[a][c], fi = ai[a][c];
MIMO_UNROLL
            for (int b = 0; b < 2 * NT; ++b) {
                ar[a][b] -= fr * ar[c][b] - fi * ai[c][b];
                ai[a][b] -= fr * ai[c][b] + fi * ar[c][b];
            }
        }
    }
    bool used[NT];
MIMO_UNROLL
    for (int t = 0; t < NT; ++t)
        used[t] = false;
MIMO_UNROLL
    for (int pos = NT - 1; pos >= 0; --pos) {
        const bool weakest = pos >= NT - full;
        int pick = -1;
        float best = 0.0f;
MIMO_UNROLL
        for (int t = 0; t < NT; ++t) {
            const float v = ar[t][NT + t];
            if (!used[t] && (pick < 0 || (weakest ? v > best : v < best))) {
                pick = t;
                best = v;
            }
        }
        perm[pos] = pick;
        used[pick] = true;
        // Schur complement: the inverse Gram matrix of the streams left.
        const float dr = ar[pick][NT + pick], di = ai[pick][NT + pick], d2 = dr * dr + di * di;
        const float ir = dr / d2, ii = -di / d2;
MIMO_UNROLL
        for (int a = 0; a < NT; ++a)
MIMO_UNROLL
            for (int b = 0; b < NT; ++b) {
                if (used[a] || used[b])
                    continue;
                // A_ab -= A_a,pick * A_pick,b / A_pick,pick
                const float ur = ar[a][NT + pick] * ir - ai[a][NT + pick] * ii;
                const float ui = ar[a][NT + pick] * ii + ai[a][NT + pick] * ir;
                ar[a][NT + b] -= ur * ar[pick][NT + b] - ui * ai[pick][NT + b];
                ai[a][NT + b] -= ur * ai[pick][NT + b] + ui * ar[pick][NT + b];
            }
    }
}

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
MIMO_HD float fsd_path(const float* E, int full, int path, const pam_table& pam, int (&level)[2 * NT])
{
    constexpr int COLS = 2 * NT, W = COLS + 1;
    const int M = pam.order(), L = pam.levels;
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
            const int symbol = digits % M;
            level[i] = (i % 2 == 0) ? symbol / L : symbol % L;
            if (i % 2 == 0)
                digits /= M; // both rows of this position done
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
MIMO_HD float sfsd_extension(const float* E, const int (&base)[2 * NT], int pos, int k, const pam_table& pam,
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
        chosen[n] = best < 0 ? 0 : best; // only non-finite distances left: the problem is flagged
    }
}

/// Feeds a complete candidate into per-stream symbol minima: keep_min(t * M + s, d).
template <int NT, typename KeepMin>
MIMO_HD void fsd_record(const int (&level)[2 * NT], const int (&perm)[NT], float d, const pam_table& pam,
                        KeepMin&& keep_min)
{
MIMO_UNROLL
    for (int j = 0; j < NT; ++j)
        keep_min(perm[j] * pam.order() + level[2 * j] * pam.levels + level[2 * j + 1], d);
}

/// Hard-decision LLRs of a path: +-clip by its bits, stream perm[j]'s at [perm[j] * Q, ...).
template <int NT>
MIMO_HD void fsd_hard_llrs(const int (&level)[2 * NT], const int (&perm)[NT], const pam_table& pam, float clip,
                           float* llr)
{
    const int Q = pam.bits_per_symbol();
MIMO_UNROLL
    for (int j = 0; j < NT; ++j)
        for (int k = 0; k < Q; ++k)
            llr[perm[j] * Q + k] = pam.symbol_bit(level[2 * j], level[2 * j + 1], k) ? -clip : clip;
}

} // namespace detail
} // namespace mimo_gpu
