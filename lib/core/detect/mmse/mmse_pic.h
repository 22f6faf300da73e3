// Soft MMSE with parallel interference cancellation (MMSE-PIC), the pieces the
// CPU engine and the CUDA kernel share (docs/detectors.md, "Soft MMSE with
// priors"). With a-priori LLRs each user's soft symbol (mean x_bar, variance E)
// is cancelled from y, and user u is filtered by the MMSE filter of
// C_u = H Lambda_u H^H + N0 I, Lambda = diag(E) with E_u replaced by 1 (its own
// symbol is what is sought). With D = Lambda^1/2 and the Hermitian
// M = D G D + N0 I (G = H^H H), one factorisation serves every user:
//   t_u   = (M^-1 D G)_uu,  v = M^-1 D (y_MF - G x_bar),
//   z_u   = x_bar_u + v_u / t_u               (unbiased, own symbol restored),
//   rho_u = t_u / (d_u N0 (M^-1)_uu)          (its SINR; no cancellation).
// (The rank-1 update from C to C_u cancels in z_u; 1 - E_u a_u = N0 (M^-1)_uu.)
// Without priors (D = I) these are exactly the plain MMSE's lambda and rho.
#pragma once

#include "../pam_table.h"

#include <math.h>

namespace mimo_gpu {
namespace detail {

/// A symbol's prior variance is floored here (unit-energy constellation): the
/// formulas divide by d_u; the floor changes the other users' filters by far
/// less than float resolution and the user's own result not at all.
constexpr float k_pic_min_variance = 1e-10f;

/// Whether a problem's priors are all zero: it is then detected exactly as
/// without priors (DESIGN.md, "Priors and extrinsics").
MIMO_HD bool priors_all_zero(const float* priors, int count)
{
    bool zero = true;
    for (int i = 0; i < count; ++i)
        zero &= priors[i] == 0.0f;
    return zero;
}

struct soft_symbol {
    float re, im;   ///< mean
    float variance; ///< E |x - mean|^2, floored at k_pic_min_variance
};

/// Mean and variance of one PAM dimension whose bits_per_dim a-priori LLRs are
/// `priors[first], priors[first + 2], ...` (3GPP order alternates I and Q bits).
MIMO_HD void pam_moments(
    const float* priors, int first, const pam_table& pam, float& mean, float& variance)
{
    float p0[k_max_pam_levels], p1[k_max_pam_levels];
    const int bits = pam.bits_per_dim;
    for (int j = 0; j < bits; ++j) { // P(b=0) = 1/(1+e^-L), P(b=1) = 1/(1+e^L)
        const float l = priors[first + 2 * j];
        p0[j] = 1.0f / (1.0f + expf(-l));
        p1[j] = 1.0f / (1.0f + expf(l));
    }
    float m = 0.0f, total = 0.0f;
    for (int level = 0; level < pam.levels; ++level) {
        float p = 1.0f;
        for (int j = 0; j < bits; ++j)
            p *= ((pam.label[level] >> (bits - 1 - j)) & 1) ? p1[j] : p0[j];
        total += p;
        m += p * pam.amplitude(level);
    }
    m /= total;
    float v = 0.0f;
    for (int level = 0; level < pam.levels; ++level) {
        float p = 1.0f;
        for (int j = 0; j < bits; ++j)
            p *= ((pam.label[level] >> (bits - 1 - j)) & 1) ? p1[j] : p0[j];
        const float e = pam.amplitude(level) - m;
        v += p * e * e;
    }
    mean = m;
    variance = v / total;
}

/// A user's soft symbol from its Q a-priori LLRs (the bits independent).
MIMO_HD soft_symbol soft_symbol_from_priors(const float* priors, const pam_table& pam)
{
    soft_symbol s;
    float vi, vq;
    pam_moments(priors, 0, pam, s.re, vi);
    pam_moments(priors, 1, pam, s.im, vq);
    const float e = vi + vq;
    s.variance = e > k_pic_min_variance ? e : k_pic_min_variance;
    return s;
}

/// Extrinsic max-log LLRs of one user's Q bits from its PIC estimate (zr, zi)
/// of SINR rho and its a-priori LLRs: bit k's metric over the levels of its
/// dimension is rho (z - a)^2 plus the prior cost of the dimension's other bits
/// (a bit against its prior's sign costs |L|, as in symbol_prior_cost); bit k's
/// own prior is left out, so the result is a-posteriori minus a-priori.
MIMO_HD void mmse_pic_llrs(float zr,
                           float zi,
                           float rho,
                           const float* priors,
                           const pam_table& pam,
                           float clip,
                           float* llr)
{
    const int Q = pam.bits_per_symbol(), L = pam.levels, bits = pam.bits_per_dim;
    for (int k = 0; k < Q; ++k) {
        const float z = (k % 2 == 0) ? zr : zi;
        float min0 = k_infinity, min1 = k_infinity;
        for (int level = 0; level < L; ++level) {
            const float e = z - pam.amplitude(level);
            float d = rho * (e * e);
            for (int j = k % 2; j < Q; j += 2) {
                if (j == k)
                    continue;
                const float l = priors[j];
                const bool bit = (pam.label[level] >> (bits - 1 - j / 2)) & 1;
                d += bit != (l < 0.0f) ? (l < 0.0f ? -l : l) : 0.0f;
            }
            if ((pam.label[level] >> (bits - 1 - k / 2)) & 1)
                min1 = d < min1 ? d : min1;
            else
                min0 = d < min0 ? d : min0;
        }
        float v = min1 - min0;
        if (!(v == v)) // inf - inf: only where the engines already erase
            v = 0.0f;
        llr[k] = saturate_llr(v, clip);
    }
}

/// A user's PIC estimate from t_u, v_u, (M^-1)_uu and d_u (see the top); a user
/// the channel does not see (t_u <= 0, or a non-finite value) gives rho = 0,
/// hence extrinsic LLRs 0, and z = 0.
struct pic_estimate {
    float zr, zi, rho;
};
MIMO_HD pic_estimate pic_user(soft_symbol prior,
                              float t,
                              float vr,
                              float vi,
                              float minv_diagonal,
                              float d,
                              float n0)
{
    float rho = t / (d * n0 * minv_diagonal);
    const float zr = prior.re + vr / t, zi = prior.im + vi / t;
    if (!(t > 0.0f) || !(rho > 0.0f) || !(zr - zr == 0.0f) || !(zi - zi == 0.0f))
        return { 0.0f, 0.0f, 0.0f };
    if (!(rho <= k_llr_limit))
        rho = k_llr_limit;
    return { zr, zi, rho };
}

} // namespace detail
} // namespace mimo_gpu
