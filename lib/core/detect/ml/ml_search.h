// Exhaustive max-log ML, one slice of the search: all M symbols of the last
// stream for one combination `outer` of the other streams' symbols. The
// residual of the fixed streams is formed once and reused across the M
// symbols. Shared by the CPU engine and the CUDA kernel.
#pragma once

#include "../../runtime/host_device.h"
#include "../../runtime/scale_normaliser.h"
#include "../pam_table.h"

#include <mimo_gpu/types.h>

#include <cstdint>

namespace mimo_gpu {
namespace detail {

/// Scales one problem's H and y (in place, a copy of the caller's) by the power
/// of two that brings max(|H|, |y|) near 1, and returns it: the distances are
/// then those of the problem scaled to 1 (N0 is scaled by its square), and
/// cannot overflow or underflow at any scale of the inputs (scale_normaliser.h).
MIMO_HD float ml_normalise(float* H, float* y, int nr, int nt)
{
    const float mh = max_abs_component(H, 2 * nr * nt), my = max_abs_component(y, 2 * nr);
    const float scale = normalising_scale(mh > my ? mh : my);
    for (int i = 0; i < 2 * nr * nt; ++i)
        H[i] *= scale;
    for (int i = 0; i < 2 * nr; ++i)
        y[i] *= scale;
    return scale;
}

/// H: nr*nt complex (interleaved floats, row-major), y: nr complex; cost (may
/// be null): cost[t * M + v] = symbol_prior_cost of stream t's symbol v. Calls
/// update(stream, symbol_index, metric) with, for the last stream, every symbol's metric
/// (distance plus prior costs) and, for the fixed streams, the best metric of this slice.
/// Returns false when a metric is not finite (bad input).
template <typename Update>
MIMO_HD bool ml_scan_slice(const float* H,
                           const float* y,
                           int nr,
                           int nt,
                           const pam_table& pam,
                           uint64_t outer,
                           const float* cost,
                           Update&& update)
{
    const int M = pam.order(), L = pam.levels;
    int sym[k_max_antennas];
    for (int t = 0; t < nt - 1; ++t) {
        sym[t] = int(outer % uint64_t(M));
        outer /= uint64_t(M);
    }
    float res_re[k_max_antennas], res_im[k_max_antennas];
    for (int r = 0; r < nr; ++r) {
        float re = y[2 * r], im = y[2 * r + 1];
        for (int t = 0; t < nt - 1; ++t) {
            const float sr = pam.amplitude(sym[t] / L), si = pam.amplitude(sym[t] % L);
            const float hr = H[2 * (r * nt + t)], hi = H[2 * (r * nt + t) + 1];
            re -= hr * sr - hi * si;
            im -= hr * si + hi * sr;
        }
        res_re[r] = re;
        res_im[r] = im;
    }
    const int last = nt - 1;
    float fixed_cost = 0.0f; // the fixed streams' prior costs
    if (cost)
        for (int t = 0; t < nt - 1; ++t)
            fixed_cost += cost[t * M + sym[t]];
    float best = k_infinity;
    for (int v = 0; v < M; ++v) {
        const float sr = pam.amplitude(v / L), si = pam.amplitude(v % L);
        float d = 0.0f;
        for (int r = 0; r < nr; ++r) {
            const float hr = H[2 * (r * nt + last)], hi = H[2 * (r * nt + last) + 1];
            const float er = res_re[r] - (hr * sr - hi * si);
            const float ei = res_im[r] - (hr * si + hi * sr);
            d += er * er + ei * ei;
        }
        if (cost)
            d += fixed_cost + cost[last * M + v];
        update(last, v, d);
        best = d < best ? d : best;
    }
    for (int t = 0; t < nt - 1; ++t)
        update(t, sym[t], best);
    return best < k_infinity;
}

} // namespace detail
} // namespace mimo_gpu
