// One candidate of one SSFE search pass (paper: nway-mimo-detector-gpu,
// Algorithm 2): the last complex symbol of the detection order is fixed to
// constellation point `candidate` (both of its real levels fully expanded),
// every earlier real level keeps only its best child (round and clamp).
// Shared by the CPU engine and the CUDA kernel.
#pragma once

#include "../../runtime/host_device.h"
#include "../pam_table.h"

namespace mimo_gpu {
namespace detail {

/// Whether a QR item (its `orders` blocks [R | Q^T y]) is not one of a
/// full-rank channel: a diagonal element of R that is not > 0 (an all-zero item,
/// or one a caller wrote by hand). Such an item would give confident LLRs from
/// nothing; it is erased as singular.
template <int NT>
MIMO_HD bool qr_item_singular(const float* item, int orders)
{
    constexpr int W = 2 * NT + 1;
    bool singular = false;
    for (int o = 0; o < orders; ++o)
        for (int i = 0; i < 2 * NT; ++i)
            singular |= !(item[o * 2 * NT * W + i * W + i] > 0.0f);
    return singular;
}

/// The reciprocal of R's diagonal entry in row i of an order's block E, which
/// ssfe_candidate slices with: computed once per order instead of a division
/// per level and candidate.
template <int NT>
MIMO_HD float ssfe_inverse_diagonal(const float* E, int i)
{
    constexpr int W = 2 * NT + 1;
    return 1.0f / E[i * W + i];
}

/// E: one order's block [R | y^] (2NT rows of 2NT+1 floats), `inverse` its
/// rows' ssfe_inverse_diagonal. Writes the chosen PAM level of every real level into
/// `level` and returns the squared Euclidean distance |y^ - R s|^2 of the
/// completed path. Slicing by the reciprocal rounds b / r_ii once more than a
/// division would (it may move a level at an exact boundary); the CPU and the
/// GPU slice alike.
template <int NT>
MIMO_HD float ssfe_candidate(const float* E,
                             const float* inverse,
                             int candidate,
                             const pam_table& pam,
                             int (&level)[2 * NT])
{
    constexpr int COLS = 2 * NT, W = COLS + 1;
    float p[COLS];
    level[COLS - 2] = pam.i_level(candidate); // the last symbol's I and Q levels
    level[COLS - 1] = pam.q_level(candidate);
    p[COLS - 2] = pam.amplitude(level[COLS - 2]);
    p[COLS - 1] = pam.amplitude(level[COLS - 1]);

    // The two fully expanded levels (R[COLS-2][COLS-1] is zero for MRVD, kept for
    // generality).
    float e = E[(COLS - 1) * W + COLS] - E[(COLS - 1) * W + COLS - 1] * p[COLS - 1];
    float d = e * e;
    e = E[(COLS - 2) * W + COLS] - E[(COLS - 2) * W + COLS - 1] * p[COLS - 1] -
        E[(COLS - 2) * W + COLS - 2] * p[COLS - 2];
    d += e * e;

    MIMO_UNROLL
    for (int i = COLS - 3; i >= 0; --i) {
        float b = E[i * W + COLS];
        MIMO_UNROLL
        for (int j = COLS - 1; j > i; --j)
            b -= E[i * W + j] * p[j];
        const float rii = E[i * W + i];
        level[i] = pam.slice(b * inverse[i]);
        p[i] = pam.amplitude(level[i]);
        e = b - rii * p[i];
        d += e * e;
    }
    return d;
}

/// Index of the symbol at permuted position j within a stream's minima table.
template <int NT>
MIMO_HD int symbol_index(const int (&level)[2 * NT], int j, const pam_table& pam)
{
    return level[2 * j] * pam.levels + level[2 * j + 1];
}

} // namespace detail
} // namespace mimo_gpu
