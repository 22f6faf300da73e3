// K-best breadth-first tree search on one problem's [R | Q^T y] block, the
// breadth-first reference of the MIMO literature (and Sionna's KBestDetector).
// The CPU engine runs kbest_search; the CUDA kernels (a warp per problem) run
// the same steps in parallel with the same per-child arithmetic
// (kbest_residuals, kbest_child_levels) and the same (distance, index) order.
//
// Level by level from the top position, each of the K surviving partial paths
// is extended by all M symbols of its next position and the K best of the
// K*M children (by partial Euclidean distance, ties by index) survive. The
// LLRs are max-log over the final list; a bit whose counter-hypothesis left
// the list takes the best pruned partial path that carried it where that
// path's distance exceeds the list's best (a lower bound of every completion,
// exact for paths pruned at the last level), else a fixed magnitude
// (`missing_llr`, default 3) in the direction of the list's decision, as the
// other list detectors do with their clip. (Lifting a lower pruned distance
// to the list's best gave LLRs of exactly 0 for bits ML is sure of: 48 of
// 32,000 with K = 16, 4x4 16-QAM at 10 dB; docs/detectors.md, "K-best".)
#pragma once

#include "../../runtime/host_device.h"
#include "../pam_table.h"


namespace mimo_gpu {
namespace detail {

/// One problem's scratch, element i of each array at [i * stride].
struct kbest_scratch {
    float* ped;       ///< K: the surviving paths' distances
    int* levels;      ///< K * 2NT: their real rows' levels
    float* next_ped;  ///< K
    int* next_levels; ///< K * 2NT
    float* child;     ///< K * M: the children's distances
    int* heap;        ///< K: the kept children's indices
    size_t stride;
};

/// The interference of a path's upper symbols (`level`, element j at [j *
/// stride]) on position pos's two rows: y^ minus their contribution, Q row
/// (2pos+1) into *bq and I row (2pos) into *bi.
template <int NT>
MIMO_HD void kbest_residuals(const float* E,
                             const int* level,
                             size_t stride,
                             int pos,
                             const pam_table& pam,
                             float* bq,
                             float* bi)
{
    constexpr int COLS = 2 * NT, W = COLS + 1;
    const int rq = 2 * pos + 1, ri = 2 * pos;
    float q = E[rq * W + COLS], i = E[ri * W + COLS];
    for (int j = COLS - 1; j > rq; --j) {
        const float pj = pam.amplitude(level[j * stride]);
        q -= E[rq * W + j] * pj;
        i -= E[ri * W + j] * pj;
    }
    *bq = q;
    *bi = i;
}

/// Position pos's entries of R that a child's distance takes (the two rows'
/// diagonal block), read once for all of a level's children.
struct kbest_rows {
    float qq, iq, ii; ///< R[rq][rq], R[ri][rq], R[ri][ri]
    template <int NT>
    MIMO_HD static kbest_rows at(const float* E, int pos)
    {
        constexpr int W = 2 * NT + 1;
        const int rq = 2 * pos + 1, ri = 2 * pos;
        return { E[rq * W + rq], E[ri * W + rq], E[ri * W + ri] };
    }
    /// A child's partial distance: the parent's plus the two rows of the symbol
    /// with I level li and Q level lq. With priors the caller adds the symbol's
    /// a-priori cost to it.
    MIMO_HD float
    child(float ped, float bq, float bi, int li, int lq, const pam_table& pam) const
    {
        const float pq = pam.amplitude(lq), pi = pam.amplitude(li);
        return from_products(ped, bq, bi, qq * pq, iq * pq, ii * pi);
    }
    /// child() from the products of the entries with the levels' amplitudes
    /// (a level's products are the same for every child that has the level).
    MIMO_HD static float
    from_products(float ped, float bq, float bi, float qq_pq, float iq_pq, float ii_pi)
    {
        const float eq = bq - qq_pq;
        const float ei = bi - iq_pq - ii_pi;
        return ped + eq * eq + ei * ei;
    }
};

/// kbest_rows::child at position pos of E.
template <int NT>
MIMO_HD float kbest_child_levels(const float* E,
                                 float ped,
                                 float bq,
                                 float bi,
                                 int pos,
                                 int li,
                                 int lq,
                                 const pam_table& pam)
{
    return kbest_rows::at<NT>(E, pos).child(ped, bq, bi, li, lq, pam);
}

/// kbest_child_levels of symbol `sym` (I level sym / L, Q level sym % L).
template <int NT>
MIMO_HD float kbest_child(
    const float* E, float ped, float bq, float bi, int pos, int sym, const pam_table& pam)
{
    return kbest_child_levels<NT>(
        E, ped, bq, bi, pos, pam.i_level(sym), pam.q_level(sym), pam);
}

namespace kbest_impl {
/// (d, i) before (e, j): by distance, then index.
MIMO_HD bool before(float d, int i, float e, int j) { return d < e || (d == e && i < j); }

/// Sift-down in a max-heap of child indices keyed by (child distance, index).
MIMO_HD void sift_down(const kbest_scratch& s, int n, int at)
{
    for (;;) {
        const int l = 2 * at + 1, r = l + 1;
        int top = at;
        const auto key = [&](int h) { return s.heap[h * s.stride]; };
        const auto d = [&](int c) { return s.child[size_t(c) * s.stride]; };
        if (l < n && before(d(key(top)), key(top), d(key(l)), key(l)))
            top = l;
        if (r < n && before(d(key(top)), key(top), d(key(r)), key(r)))
            top = r;
        if (top == at)
            return;
        const int t = s.heap[at * s.stride];
        s.heap[at * s.stride] = s.heap[top * s.stride];
        s.heap[top * s.stride] = t;
        at = top;
    }
}
} // namespace kbest_impl

/// Runs the search; fills dmin (NT * M, per stream and symbol: the final list's
/// minima) and pmin (the same over pruned partial paths), *best with the list's
/// best distance. cost (may be null): the a-priori cost of stream t's symbol v
/// at [t * M + v], added to the path metric. Returns false when a distance is
/// not finite.
template <int NT>
MIMO_HD bool kbest_search(const float* E,
                          const int (&perm)[NT],
                          int K,
                          const pam_table& pam,
                          const kbest_scratch& s,
                          const float* cost,
                          float* dmin,
                          float* pmin,
                          float* best)
{
    constexpr int COLS = 2 * NT;
    const int M = pam.order(), L = pam.levels;
    const size_t st = s.stride;
    for (int i = 0; i < NT * M; ++i) {
        dmin[i] = k_infinity;
        pmin[i] = k_infinity;
    }
    int paths = 1;
    s.ped[0] = 0.0f;
    for (int pos = NT - 1; pos >= 0; --pos) {
        const int rq = 2 * pos + 1, ri = 2 * pos;
        const int children = paths * M;
        for (int a = 0; a < paths; ++a) {
            float bq, bi;
            kbest_residuals<NT>(
                E, s.levels + size_t(a) * COLS * st, st, pos, pam, &bq, &bi);
            const float ped = s.ped[a * st];
            for (int c = 0; c < M; ++c) {
                const float d = kbest_child<NT>(E, ped, bq, bi, pos, c, pam);
                s.child[size_t(a * M + c) * st] = cost ? d + cost[perm[pos] * M + c] : d;
            }
        }
        for (int c = 0; c < children; ++c)
            if (!(s.child[size_t(c) * st] < k_infinity))
                return false;
        // The K best children: a max-heap of the best seen, then sorted ascending.
        const int keep = children < K ? children : K;
        for (int h = 0; h < keep; ++h)
            s.heap[h * st] = h;
        for (int h = keep / 2 - 1; h >= 0; --h)
            kbest_impl::sift_down(s, keep, h);
        for (int c = keep; c < children; ++c) {
            const int top = s.heap[0];
            if (kbest_impl::before(
                    s.child[size_t(c) * st], c, s.child[size_t(top) * st], top)) {
                s.heap[0] = c;
                kbest_impl::sift_down(s, keep, 0);
            }
        }
        const int worst = s.heap[0];
        const float worst_d = s.child[size_t(worst) * st];
        for (int n = keep - 1; n > 0; --n) { // heap sort: ascending
            const int t = s.heap[0];
            s.heap[0] = s.heap[n * st];
            s.heap[n * st] = t;
            kbest_impl::sift_down(s, n, 0);
        }
        // The pruned children's hypotheses, for bits that leave the list.
        if (children > keep)
            for (int c = 0; c < children; ++c) {
                const float d = s.child[size_t(c) * st];
                if (kbest_impl::before(d, c, worst_d, worst) || c == worst)
                    continue; // kept
                const int a = pam.parent_of(c), sym = pam.symbol_of(c);
                float& here = pmin[perm[pos] * M + sym];
                here = d < here ? d : here;
                for (int j = pos + 1; j < NT; ++j) {
                    const int up = s.levels[(size_t(a) * COLS + 2 * j) * st] * L +
                                   s.levels[(size_t(a) * COLS + 2 * j + 1) * st];
                    float& m = pmin[perm[j] * M + up];
                    m = d < m ? d : m;
                }
            }
        for (int n = 0; n < keep; ++n) {
            const int c = s.heap[n * st], a = pam.parent_of(c), sym = pam.symbol_of(c);
            for (int j = 2 * pos + 2; j < COLS; ++j)
                s.next_levels[(size_t(n) * COLS + j) * st] =
                    s.levels[(size_t(a) * COLS + j) * st];
            s.next_levels[(size_t(n) * COLS + ri) * st] = pam.i_level(sym);
            s.next_levels[(size_t(n) * COLS + rq) * st] = pam.q_level(sym);
            s.next_ped[n * st] = s.child[size_t(c) * st];
        }
        for (int n = 0; n < keep; ++n) {
            s.ped[n * st] = s.next_ped[n * st];
            for (int j = 2 * pos; j < COLS; ++j)
                s.levels[(size_t(n) * COLS + j) * st] =
                    s.next_levels[(size_t(n) * COLS + j) * st];
        }
        paths = keep;
    }
    *best = s.ped[0];
    for (int n = 0; n < paths; ++n) {
        const float d = s.ped[n * st];
        for (int j = 0; j < NT; ++j) {
            float& m = dmin[perm[j] * M + s.levels[(size_t(n) * COLS + 2 * j) * st] * L +
                            s.levels[(size_t(n) * COLS + 2 * j + 1) * st]];
            m = d < m ? d : m;
        }
    }
    return true;
}

/// Max-log LLR of a bit from the best metrics of its two sides over the final
/// list (min0: bit 0, min1: bit 1) and over the pruned partial paths (p0, p1):
/// a side the list lacks is taken from the pruned minimum where that exceeds
/// `best`, else the LLR is +-missing (at most the clip) toward the list's
/// decision. Extrinsic: the bit's a-priori LLR `prior` is in the metrics, and
/// the result is the unclipped a-posteriori LLR less it, clipped; a bit with a
/// side missing keeps +-missing toward the list's decision (a fixed magnitude
/// less a prior in the same direction would point the wrong way).
template <bool Extrinsic>
MIMO_HD float kbest_llr_from_sides(float min0,
                                   float min1,
                                   float p0,
                                   float p1,
                                   float best,
                                   float n0,
                                   float clip,
                                   float missing,
                                   float prior)
{
    const float inf = k_infinity;
    if (!(min0 < inf) && p0 > best && p0 < inf)
        min0 = p0;
    if (!(min1 < inf) && p1 > best && p1 < inf)
        min1 = p1;
    const float limit = clip > 0.0f && clip < missing ? clip : missing;
    if (!(min1 < inf))
        return limit;
    if (!(min0 < inf))
        return -limit;
    const float app = (min1 - min0) / n0;
    return saturate_llr(Extrinsic ? app - prior : app, clip);
}

/// kbest_llr_from_sides of bit k of one stream from the axis minima of bit k's
/// axis (axis_minimum, L levels each) of the stream's list symbol minima
/// (`list`) and pruned paths' symbol minima (`pruned`): the minimum over the
/// symbols whose bit k is b is the minimum over that axis's levels with label
/// bit b (pam_table.h). kbest_warp_llrs_from_axis_minima takes the same steps on the GPU.
template <bool Extrinsic>
MIMO_HD float kbest_llr(const float* list,
                        const float* pruned,
                        float best,
                        const pam_table& pam,
                        int k,
                        float n0,
                        float clip,
                        float missing,
                        float prior)
{
    float min0, min1, p0, p1;
    bit_side_minima(
        pam, k, [list](int level) { return list[level]; }, min0, min1);
    bit_side_minima(
        pam, k, [pruned](int level) { return pruned[level]; }, p0, p1);
    return kbest_llr_from_sides<Extrinsic>(
        min0, min1, p0, p1, best, n0, clip, missing, prior);
}

} // namespace detail
} // namespace mimo_gpu
