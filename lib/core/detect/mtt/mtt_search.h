// The steps of the multi-pass trellis traversal (MTT) detector (thesis:
// mtt-detector-and-lte-turbo-decoder-gpu, sections 3.2 and 4.1), written once
// for the CPU engine (a loop over lanes) and the CUDA kernel (a thread per lane).
//
// The trellis has one stage per complex stream, detected from the last stream
// (stage 0 = stream nt-1) to the first, and M vertices per stage, one per
// constellation point. A path's weight is |y^ - R s|^2 over the stages it has
// passed, with [R | y^] the real-valued (MRVD) QR of H in natural order, so
// stream j owns real rows 2j (in-phase) and 2j+1 (quadrature).
//   - Edge reduction into stage t: every vertex keeps its best incoming path
//     (the M paths of stage t-1 each extended by that vertex).
//   - Path extension: a path is completed greedily, stage by stage, with the
//     best next symbol.
// The candidate list of stage t is the M paths reduced up to stage t, each
// extended to the end: for every point of stream nt-1-t, the best path found
// through it. MTT makes all nt lists (shared reductions); the one-pass
// variant OT only the last one (reductions to the end, no extension).
#pragma once

#include "../../runtime/host_device.h"
#include "../pam_table.h"

namespace mimo_gpu {
namespace detail {

/// Row width of the [R | y^] block (2NT rows of 2NT + 1 floats).
template <int NT>
MIMO_HD constexpr int mtt_width()
{
    return 2 * NT + 1;
}

/// The residuals of stream a's two real rows once the path's streams a+1..NT-1
/// (amplitudes p, indexed by real column) are taken out: b_i = y^_i - sum_{c > 2a+1} R_ic p_c.
template <int NT>
MIMO_HD void mtt_residual(const float* E, int a, const float* p, float& b0, float& b1)
{
    constexpr int W = mtt_width<NT>();
    const int i0 = 2 * a, i1 = 2 * a + 1;
    b0 = E[i0 * W + 2 * NT];
    b1 = E[i1 * W + 2 * NT];
MIMO_UNROLL
    for (int c = 2 * NT - 1; c > i1; --c) {
        b0 -= E[i0 * W + c] * p[c];
        b1 -= E[i1 * W + c] * p[c];
    }
}

/// The weight of giving stream a the point (pi, pq) after residuals (b0, b1).
template <int NT>
MIMO_HD float mtt_weight(const float* E, int a, float b0, float b1, float pi, float pq)
{
    constexpr int W = mtt_width<NT>();
    const int i0 = 2 * a, i1 = 2 * a + 1;
    const float e1 = b1 - E[i1 * W + i1] * pq;
    const float e0 = b0 - E[i0 * W + i0] * pi - E[i0 * W + i1] * pq;
    return e0 * e0 + e1 * e1;
}

/// Sets path amplitudes p[2a], p[2a+1] and sym[a] for point v of stream a.
template <int NT>
MIMO_HD void mtt_assign(int a, int v, const pam_table& pam, float* p, int* sym)
{
    sym[a] = v;
    p[2 * a] = pam.amplitude(v / pam.levels);
    p[2 * a + 1] = pam.amplitude(v % pam.levels);
}

/// Path extension: completes a path that holds streams a_last..NT-1 (its
/// distance d) with the best point of each remaining stream a_last-1..0, in
/// turn. Ties keep the lower point index. Returns the full distance.
template <int NT>
MIMO_HD float mtt_extend(const float* E, int a_last, const pam_table& pam, float* p, int* sym, float d)
{
    const int M = pam.order();
MIMO_UNROLL
    for (int a = a_last - 1; a >= 0; --a) {
        float b0, b1;
        mtt_residual<NT>(E, a, p, b0, b1);
        float best = k_infinity;
        int best_v = 0;
        for (int v = 0; v < M; ++v) {
            const float w = mtt_weight<NT>(E, a, b0, b1, pam.amplitude(v / pam.levels),
                                           pam.amplitude(v % pam.levels));
            if (w < best) {
                best = w;
                best_v = v;
            }
        }
        mtt_assign<NT>(a, best_v, pam, p, sym);
        d += best;
    }
    return d;
}

/// Edge reduction into vertex v of stream a: the best of the M incoming paths
/// k (distance d[k], residuals b0[k], b1[k] for stream a). Ties keep the lower k.
template <int NT>
MIMO_HD int mtt_best_incoming(const float* E, int a, const pam_table& pam, int v, const float* d, const float* b0,
                              const float* b1, float& d_out)
{
    const int M = pam.order();
    const float pi = pam.amplitude(v / pam.levels), pq = pam.amplitude(v % pam.levels);
    float best = k_infinity;
    int best_k = 0;
    for (int k = 0; k < M; ++k) {
        const float total = d[k] + mtt_weight<NT>(E, a, b0[k], b1[k], pi, pq);
        if (total < best) {
            best = total;
            best_k = k;
        }
    }
    d_out = best;
    return best_k;
}

} // namespace detail
} // namespace mimo_gpu
