// The soft-output stage of the MMSE families, written once for the CPU engine
// and the CUDA kernels (paper Algorithm 1, lines 16-20): the post-equalisation
// gain lambda and SINR rho of a user, and the max-log LLRs of its unbiased
// equalised symbol z = x_hat / lambda, whose error has variance 1 / rho.
#pragma once

#include "../pam_table.h"

#ifndef __CUDACC__
#include <algorithm>
#include <cstring>
#endif

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

/// Max-log LLR (3GPP bit order, L = ln P(b=0)/P(b=1)) of bit k of one user from
/// its equalised symbol (zr, zi) and SINR rho. Each bit depends on one PAM
/// dimension, so the other dimension's distance cancels. A non-finite result
/// saturates at +-k_llr_limit; clip > 0 clips to [-clip, clip].
MIMO_HD float
mmse_bit_llr(float zr, float zi, float rho, const pam_table& pam, float clip, int k)
{
    const int L = pam.levels;
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
    if (!(v == v)) // NaN (only from inputs the engines already erase): never passed on
        v = 0.0f;
    return saturate_llr(v, clip);
}

/// The Q max-log LLRs of one user (mmse_bit_llr for k = 0..Q-1).
MIMO_HD void mmse_symbol_llrs(
    float zr, float zi, float rho, const pam_table& pam, float clip, float* llr)
{
    const int Q = pam.bits_per_symbol();
    for (int k = 0; k < Q; ++k)
        llr[k] = mmse_bit_llr(zr, zi, rho, pam, clip, k);
}

#ifndef __CUDACC__
/// mmse_symbol_llrs for many users at once on the CPU (users' symbols zr, zi
/// and SINRs rho; user i's Q LLRs to out[i]): the same operations on each user
/// as mmse_symbol_llrs, so the same values to the bit, with four users side by
/// side in vector lanes (64 queued) and each dimension's L distances computed once
/// instead of once per bit (one user at a time, the loops cost a 2x2 16-QAM problem more
/// than its equalisation). The GPU computes a bit a lane (mmse_bit_llr).
class mmse_llr_batch
{
public:
    static constexpr int capacity = 64;

    /// Queues one user; the LLRs are written by flush() (called when full).
    void add(float zr, float zi, float rho, float* out, const pam_table& pam, float clip)
    {
        m_zr[m_count] = zr;
        m_zi[m_count] = zi;
        m_rho[m_count] = rho;
        m_out[m_count] = out;
        if (++m_count == capacity)
            flush(pam, clip);
    }

    void flush(const pam_table& pam, float clip)
    {
        switch (pam.levels) {
        case 2:
            run<2>(pam, clip);
            break;
        case 4:
            run<4>(pam, clip);
            break;
        case 8:
            run<8>(pam, clip);
            break;
        case 16:
            run<16>(pam, clip);
            break;
        default:
            run<32>(pam, clip);
            break;
        }
        m_count = 0;
    }

private:
    static constexpr int lanes = 4; // SSE2, every x86-64
    typedef float lane_floats __attribute__((vector_size(4 * lanes)));

    static lane_floats broadcast(float v)
    {
        lane_floats r;
        for (int i = 0; i < lanes; ++i)
            r[i] = v;
        return r;
    }

    template <int L>
    void run(const pam_table& pam, float clip)
    {
        constexpr int per_dim = L == 2 ? 1 : L == 4 ? 2 : L == 8 ? 3 : L == 16 ? 4 : 5;
        const lane_floats inf = broadcast(k_infinity), zero = broadcast(0.0f);
        const float bound = clip > 0.0f ? clip : k_llr_limit; // saturate_llr
        const lane_floats upper = broadcast(bound), lower = broadcast(-bound);
        for (int i = m_count; i % lanes != 0; ++i) { // idle lanes: finite, unused
            m_zr[i] = m_zi[i] = m_rho[i] = 0.0f;
            m_out[i] = nullptr;
        }
        for (int first = 0; first < m_count; first += lanes) {
            lane_floats rho, zs[2];
            std::memcpy(&rho, m_rho + first, sizeof rho);
            std::memcpy(&zs[0], m_zr + first, sizeof rho);
            std::memcpy(&zs[1], m_zi + first, sizeof rho);
            lane_floats llr[2 * per_dim];
            for (int dim = 0; dim < 2; ++dim) {
                lane_floats d[L];
                for (int l = 0; l < L; ++l) {
                    const lane_floats e = zs[dim] - broadcast(pam.amplitude(l));
                    d[l] = e * e;
                }
                for (int j = 0; j < per_dim; ++j) {
                    const int shift = per_dim - 1 - j;
                    lane_floats min0 = inf, min1 = inf;
                    for (int l = 0; l < L; ++l) {
                        if ((pam.label[l] >> shift) & 1)
                            min1 = d[l] < min1 ? d[l] : min1;
                        else
                            min0 = d[l] < min0 ? d[l] : min0;
                    }
                    lane_floats v = rho * (min1 - min0);
                    v = v == v ? v : zero;
                    v = v > upper ? upper : (v < lower ? lower : v);
                    llr[2 * j + dim] = v;
                }
            }
            const int users = std::min(lanes, m_count - first);
            for (int u = 0; u < users; ++u)
                for (int k = 0; k < 2 * per_dim; ++k)
                    m_out[first + u][k] = llr[k][u];
        }
    }

    int m_count = 0;
    float m_zr[capacity], m_zi[capacity], m_rho[capacity];
    float* m_out[capacity];
};
#endif

} // namespace detail
} // namespace mimo_gpu
