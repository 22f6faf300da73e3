// The soft-output stage of the MMSE families, written once for the CPU engine
// and the CUDA kernels (paper Algorithm 1, lines 16-20): the post-equalisation
// gain lambda and SINR rho of a user, and the max-log LLRs of its unbiased
// equalised symbol z = x_hat / lambda, whose error has variance 1 / rho.
#pragma once

#include "../pam_table.h"

namespace mimo_gpu {
namespace detail {

/// Cholesky mode: lambda = diag(A^-1 G)_u = 1 - N0 (A^-1)_uu, so
/// 1 - lambda = N0 (A^-1)_uu exactly (no cancellation at high SNR) and
/// rho = lambda / (1 - lambda) (unit symbol energy).
struct mmse_gain {
    float lambda, rho;
};
MIMO_HD mmse_gain mmse_gain_exact(float inverse_diagonal, float n0)
{
    const float one_minus = n0 * inverse_diagonal;
    const float lambda = 1.0f - one_minus;
    return { lambda, lambda / one_minus };
}
/// CG mode (the paper's approximation, no inverse): rho ~ G_uu / N0,
/// lambda = rho / (1 + rho) = G_uu / (G_uu + N0), written so that a huge G_uu
/// (rho = inf) still gives lambda = 1; rho is kept finite for the LLRs.
MIMO_HD mmse_gain mmse_gain_approximate(float gram_diagonal, float n0)
{
    float rho = gram_diagonal / n0;
    if (!(rho <= k_llr_limit))
        rho = k_llr_limit;
    return { gram_diagonal / (gram_diagonal + n0), rho };
}

/// Max-log LLRs (3GPP bit order, L = ln P(b=0)/P(b=1)) of the Q bits of one
/// user from its equalised symbol (zr, zi) and SINR rho. Each bit depends on
/// one PAM dimension, so the other dimension's distance cancels.
/// Non-finite results saturate at +-k_llr_limit; clip > 0 clips to [-clip, clip].
MIMO_HD void mmse_symbol_llrs(
    float zr, float zi, float rho, const pam_table& pam, float clip, float* llr)
{
    const int Q = pam.bits_per_symbol(), L = pam.levels;
    for (int k = 0; k < Q; ++k) {
        const float z = (k % 2 == 0) ? zr : zi;
        const int shift = pam.bits_per_dim - 1 - k / 2;
        float min0 = k_infinity, min1 = k_infinity;
        for (int l = 0; l < L; ++l) {
            const float e = z - pam.amplitude(l);
            const float d = e * e;
            // Selects, not a branch on the label bit: the bits alternate level by
            // level, and the mispredicted branch was the CPU MMSE's hottest spot.
            const bool one = (pam.label[l] >> shift) & 1;
            const float d1 = one ? d : k_infinity, d0 = one ? k_infinity : d;
            min1 = d1 < min1 ? d1 : min1;
            min0 = d0 < min0 ? d0 : min0;
        }
        float v = rho * (min1 - min0);
        if (!(v ==
              v)) // NaN (only from inputs the engines already erase): never passed on
            v = 0.0f;
        llr[k] = saturate_llr(v, clip);
    }
}

} // namespace detail
} // namespace mimo_gpu
