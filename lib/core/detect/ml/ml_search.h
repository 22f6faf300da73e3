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

/// The a-priori term of symbol v of a stream whose Q a-priori LLRs are
/// `priors` (L = ln P(0)/P(1)), in distance units: n0 times -ln P(v) up to a
/// constant, the constant chosen so that the term is never negative (each bit
/// against its prior's sign costs |L|, else 0), so metrics stay non-negative
/// (the CUDA kernel's atomicMin on the float's bits needs that). CPU and CUDA
/// sum in the same order.
MIMO_HD float ml_prior_cost(const float* priors, const pam_table& pam, int v, float n0)
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

/// H: nr*nt complex (interleaved floats, row-major), y: nr complex; cost (may
/// be null): cost[t * M + v] = ml_prior_cost of stream t's symbol v. Calls update(stream,
/// symbol_index, metric) with, for the last stream, every symbol's metric (distance plus
/// prior costs) and, for the fixed streams, the best metric of this slice. Returns false
/// when a metric is not finite (bad input).
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
