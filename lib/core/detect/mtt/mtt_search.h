// The steps of the multi-pass trellis traversal (MTT) detector (thesis:
// mtt-detector-and-lte-turbo-decoder-gpu, sections 3.2 and 4.1), written once
// for the CPU engine and the CUDA kernels.
//
// The trellis has one stage per complex stream, detected from the last stream
// (stage 0 = stream nt-1) to the first, and M = L*L vertices per stage, one per
// constellation point (PAM level li in phase, lq in quadrature, v = li*L + lq).
// A path's weight is |y^ - R s|^2 over the stages it has passed, with [R | y^]
// the real-valued (MRVD) QR of H in natural order: stream j owns real rows
// 2j (in-phase) and 2j+1 (quadrature).
//   - Edge reduction into stage t: every vertex keeps its best incoming path
//     (the M paths of stage t-1 each extended by that vertex).
//   - Path extension: a path is completed greedily, stage by stage, with the
//     best next symbol.
// The candidate list of stage t is the M paths reduced up to stage t, each
// extended to the end: for every point of stream nt-1-t, the best path found
// through it. MTT makes all nt lists (the reductions are shared); the one-pass
// variant OT only the last one (reductions to the end, no extension).
//
// NT and L are compile-time constants so that loops unroll and per-path arrays
// stay in registers; the weight of a point is split into its in-phase and
// quadrature parts so the inner loops do no index arithmetic. Ties keep the
// lower index everywhere, so the CPU and the GPU choose the same paths.
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

/// The L PAM amplitudes, indexed by level.
template <int L>
struct mtt_levels {
    float amp[L];
    MIMO_HD explicit mtt_levels(const pam_table& pam)
    {
        MIMO_UNROLL
        for (int i = 0; i < L; ++i)
            amp[i] = pam.amplitude(i);
    }
};

/// The residuals of stream a's two real rows once the path's streams a+1..NT-1
/// (amplitudes p, indexed by real column) are taken out:
/// b_i = y^_i - sum_{c > 2a+1} R_ic p_c.
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

/// Gives stream a point v in a path: sym[a] = v, amplitudes p[2a], p[2a+1].
template <int NT, int L>
MIMO_HD void mtt_assign(int a, int v, const mtt_levels<L>& lv, float* p, int* sym)
{
    sym[a] = v;
    p[2 * a] = lv.amp[v / L];
    p[2 * a + 1] = lv.amp[v % L];
}

/// The best point of stream a after residuals (b0, b1): its index (ties: the
/// lower) and weight e0^2 + e1^2 with e1 = b1 - R11 pq, e0 = (b0 - R00 pi) - R01 pq.
/// each(v, w) sees every point's weight (the CUDA kernel keeps them for the
/// edge reduction, which needs the same M^2 weights).
template <int NT, int L, typename Each>
MIMO_HD int mtt_scan_points(const float* E,
                            int a,
                            const mtt_levels<L>& lv,
                            float b0,
                            float b1,
                            float& weight,
                            Each&& each)
{
    constexpr int W = mtt_width<NT>();
    const int i0 = 2 * a, i1 = 2 * a + 1;
    const float r00 = E[i0 * W + i0], r01 = E[i0 * W + i1], r11 = E[i1 * W + i1];
    float q_part[L], q_cross[L];
    MIMO_UNROLL
    for (int lq = 0; lq < L; ++lq) {
        const float e1 = b1 - r11 * lv.amp[lq];
        q_part[lq] = e1 * e1;
        q_cross[lq] = r01 * lv.amp[lq];
    }
    float best = k_infinity;
    int best_v = 0;
    MIMO_UNROLL
    for (int li = 0; li < L; ++li) {
        const float t0 = b0 - r00 * lv.amp[li];
        MIMO_UNROLL
        for (int lq = 0; lq < L; ++lq) {
            const float e0 = t0 - q_cross[lq];
            const float w = e0 * e0 + q_part[lq];
            each(li * L + lq, w);
            if (w < best) {
                best = w;
                best_v = li * L + lq;
            }
        }
    }
    weight = best;
    return best_v;
}

template <int NT, int L>
MIMO_HD int mtt_best_point(
    const float* E, int a, const mtt_levels<L>& lv, float b0, float b1, float& weight)
{
    return mtt_scan_points<NT, L>(E, a, lv, b0, b1, weight, [](int, float) {});
}

/// Path extension: completes a path that holds streams a_last..NT-1 (distance
/// d) with the best point of each remaining stream a_last-1..0, in turn.
/// Returns the full distance.
template <int NT, int L>
MIMO_HD float mtt_extend(
    const float* E, int a_last, const mtt_levels<L>& lv, float* p, int* sym, float d)
{
    MIMO_UNROLL
    for (int a = NT - 2; a >= 0; --a) {
        if (a >= a_last)
            continue; // (a_last is a constant where this is unrolled)
        float b0, b1, w;
        mtt_residual<NT>(E, a, p, b0, b1);
        mtt_assign<NT, L>(a, mtt_best_point<NT, L>(E, a, lv, b0, b1, w), lv, p, sym);
        d += w;
    }
    return d;
}

/// The per-vertex constants of an edge reduction into vertex v of stream a.
template <int NT, int L>
struct mtt_vertex {
    float in_phase, cross, quadrature; // R00 pi, R01 pq, R11 pq
    MIMO_HD mtt_vertex(const float* E, int a, const mtt_levels<L>& lv, int v)
    {
        constexpr int W = mtt_width<NT>();
        const int i0 = 2 * a, i1 = 2 * a + 1;
        const float pi = lv.amp[v / L], pq = lv.amp[v % L];
        in_phase = E[i0 * W + i0] * pi;
        cross = E[i0 * W + i1] * pq;
        quadrature = E[i1 * W + i1] * pq;
    }
    /// d + the weight of this vertex after residuals (b0, b1); the same float
    /// operations as mtt_best_point.
    MIMO_HD float total(float d, float b0, float b1) const
    {
        const float e1 = b1 - quadrature;
        const float e0 = (b0 - in_phase) - cross;
        return d + (e0 * e0 + e1 * e1);
    }
};

/// One path of the search with its distance, as a lane holds it.
template <int NT>
struct mtt_path {
    int sym[NT];
    float p[2 * NT];
    float d;
};

/// Folds a full path into the per-stream symbol minima dmin[t*M + point].
template <int NT, int M, typename Min>
MIMO_HD void mtt_record(const int (&sym)[NT], float d, Min&& keep_min)
{
    MIMO_UNROLL
    for (int t = 0; t < NT; ++t)
        keep_min(t * M + sym[t], d);
}

/// The whole search of one problem by one thread, lane after lane (the CPU
/// engine, and the CUDA kernel for small constellations). dmin: NT*M floats.
template <int NT, int L>
MIMO_HD void
mtt_search_serial(const float* E, const mtt_levels<L>& lv, bool multipass, float* dmin)
{
    constexpr int M = L * L;
    MIMO_UNROLL
    for (int i = 0; i < NT * M; ++i)
        dmin[i] = k_infinity;
    auto keep_min = [dmin](int i, float d) { dmin[i] = d < dmin[i] ? d : dmin[i]; };
    auto record = [&](const mtt_path<NT>& path, int a_last) {
        mtt_path<NT> full = path;
        full.d = mtt_extend<NT, L>(E, a_last, lv, full.p, full.sym, path.d);
        mtt_record<NT, M>(full.sym, full.d, keep_min);
    };
    mtt_path<NT> lane[M];
    float b0, b1;
    mtt_residual<NT>(E, NT - 1, lane[0].p, b0, b1);
    MIMO_UNROLL
    for (int v = 0; v < M; ++v) { // stage 0: stream NT-1 alone, one path per point
        mtt_assign<NT, L>(NT - 1, v, lv, lane[v].p, lane[v].sym);
        lane[v].d = mtt_vertex<NT, L>(E, NT - 1, lv, v).total(0.0f, b0, b1);
        if (multipass || NT == 1)
            record(lane[v], NT - 1);
    }
    MIMO_UNROLL
    for (int t = 1; t < NT; ++t) {
        const int a = NT - 1 - t;
        float d[M], r0[M], r1[M];
        MIMO_UNROLL
        for (int k = 0; k < M; ++k) {
            mtt_residual<NT>(E, a, lane[k].p, r0[k], r1[k]);
            d[k] = lane[k].d;
        }
        int from[M];
        float next_d[M];
        MIMO_UNROLL
        for (int v = 0; v < M; ++v) {
            const mtt_vertex<NT, L> vertex(E, a, lv, v);
            float best = k_infinity;
            int best_k = 0;
            MIMO_UNROLL
            for (int k = 0; k < M; ++k) {
                const float total = vertex.total(d[k], r0[k], r1[k]);
                if (total < best) {
                    best = total;
                    best_k = k;
                }
            }
            from[v] = best_k;
            next_d[v] = best;
        }
        mtt_path<NT> next[M];
        MIMO_UNROLL
        for (int v = 0; v < M; ++v) {
            next[v] = lane[from[v]];
            mtt_assign<NT, L>(a, v, lv, next[v].p, next[v].sym);
            next[v].d = next_d[v];
        }
        MIMO_UNROLL
        for (int v = 0; v < M; ++v) {
            lane[v] = next[v];
            if (multipass || t == NT - 1)
                record(lane[v], a);
        }
    }
}

} // namespace detail
} // namespace mimo_gpu
