// The per-partition steps of SUMIS (subspace marginalisation with interference
// suppression; docs/detectors.md "SUMIS"), written once for the CPU engine and
// the CUDA kernels, in double precision: the n_s-dimensional system of a
// partition, its hypotheses' metrics, exact log-sum-exp bit LLRs, and the soft
// symbols that stage II subtracts.
//
// Real-valued model: y = H s + n with m = 2 nr rows and n = 2 nt real symbols,
// s = [Re s_c; Im s_c], n ~ N(0, (N0/2) I). Real symbol t < nt carries the even
// bits of stream t (I), t + nt the odd ones (Q), as the 3GPP labels pair them.
//
// A partition i keeps the subspace S = {i} and the n_s - 1 symbols most
// correlated with it (largest |(H^T H)_ij|); the rest, with means m and
// variances v, is Gaussian interference: Q_i = H~ V~ H~^T + (N0/2) I. With
// Q_f = H V H^T + (N0/2) I over every symbol, F = H_S^T Q_f^-1 H_S and
// g = H^T Q_f^-1 (y - H m) (computed once per vector for all partitions):
//   B = H_S^T Q_i^-1 H_S = F (I - V_S F)^-1,
//   z = H_S^T Q_i^-1 (y - H~ m~) = (I - F V_S)^-1 (g_S + F m_S),
// and hypothesis s_S has metric s_S^T z - s_S^T B s_S / 2 + its log prior
// (the paper's equation 8 without the terms every hypothesis shares).
#pragma once

#include "../../runtime/host_device.h"
#include "../pam_table.h"

#include <math.h>

namespace mimo_gpu {
namespace detail {

constexpr int k_sumis_max_ns = 8;
constexpr int k_sumis_max_bits_per_dim = 5; // 1024-QAM

/// Element (a, j) of the real model's m x n matrix from the complex nr x nt H
/// (row-major).
MIMO_HD double sumis_real_h(const float* Hc, int nr, int nt, int a, int j)
{
    const int r = a < nr ? a : a - nr, t = j < nt ? j : j - nt;
    const double re = Hc[2 * (r * nt + t)], im = Hc[2 * (r * nt + t) + 1];
    if (a < nr)
        return j < nt ? re : -im;
    return j < nt ? im : re;
}
MIMO_HD double sumis_real_y(const float* yc, int nr, int a)
{
    return a < nr ? yc[2 * a] : yc[2 * (a - nr) + 1];
}

/// Which output LLR a real symbol's bit is: stream t's bit k is real symbol
/// t (k even) or t + nt (k odd), bit k / 2 of its PAM label.
MIMO_HD int sumis_output_index_hd(int dim, int b, int nt, int Q)
{
    const int t = dim < nt ? dim : dim - nt;
    return t * Q + 2 * b + (dim < nt ? 0 : 1);
}

/// In-place inverse of the k x k matrix A (row-major), Gauss-Jordan with
/// partial pivoting; false if singular.
MIMO_HD bool sumis_invert(int k, double* A)
{
    double inv[k_sumis_max_ns * k_sumis_max_ns];
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j)
            inv[i * k + j] = i == j ? 1.0 : 0.0;
    for (int c = 0; c < k; ++c) {
        int p = c;
        for (int i = c + 1; i < k; ++i)
            if (fabs(A[i * k + c]) > fabs(A[p * k + c]))
                p = i;
        if (!(fabs(A[p * k + c]) > 0.0))
            return false;
        if (p != c)
            for (int j = 0; j < k; ++j) {
                double t = A[c * k + j];
                A[c * k + j] = A[p * k + j];
                A[p * k + j] = t;
                t = inv[c * k + j];
                inv[c * k + j] = inv[p * k + j];
                inv[p * k + j] = t;
            }
        const double d = 1.0 / A[c * k + c];
        for (int j = 0; j < k; ++j) {
            A[c * k + j] *= d;
            inv[c * k + j] *= d;
        }
        for (int i = 0; i < k; ++i)
            if (i != c) {
                const double f = A[i * k + c];
                if (f != 0.0)
                    for (int j = 0; j < k; ++j) {
                        A[i * k + j] -= f * A[c * k + j];
                        inv[i * k + j] -= f * inv[c * k + j];
                    }
            }
    }
    for (int i = 0; i < k * k; ++i)
        A[i] = inv[i];
    return true;
}

/// The partition's system (B, z) from F = G'_SS (ns x ns, G' = H^T Q_f^-1 H),
/// g, and the means and variances of the subspace symbols S.
/// False when I - V_S F cannot be inverted (a numerically singular Q_i).
MIMO_HD bool sumis_partition_system(int ns,
                                    const int* S,
                                    const double* F,
                                    const double* g,
                                    const double* mean,
                                    const double* var,
                                    double* B,
                                    double* z)
{
    double M[k_sumis_max_ns * k_sumis_max_ns];
    for (int a = 0; a < ns; ++a) // M = I - V_S F
        for (int b = 0; b < ns; ++b)
            M[a * ns + b] = (a == b ? 1.0 : 0.0) - var[S[a]] * F[a * ns + b];
    if (!sumis_invert(ns, M))
        return false;
    for (int a = 0; a < ns; ++a) // B = F M^-1
        for (int b = 0; b < ns; ++b) {
            double s = 0;
            for (int c = 0; c < ns; ++c)
                s += F[a * ns + c] * M[c * ns + b];
            B[a * ns + b] = s;
        }
    for (int a = 0; a < ns; ++a) // symmetrise what rounding left
        for (int b = a + 1; b < ns; ++b) {
            const double s = 0.5 * (B[a * ns + b] + B[b * ns + a]);
            B[a * ns + b] = s;
            B[b * ns + a] = s;
        }
    double u[k_sumis_max_ns];
    for (int a = 0; a < ns; ++a) { // u = g_S + F m_S
        double s = g[S[a]];
        for (int c = 0; c < ns; ++c)
            s += F[a * ns + c] * mean[S[c]];
        u[a] = s;
    }
    for (int a = 0; a < ns; ++a) { // z = (I - F V_S)^-1 u = M^-T u
        double s = 0;
        for (int c = 0; c < ns; ++c)
            s += M[c * ns + a] * u[c];
        z[a] = s;
    }
    for (int a = 0; a < ns; ++a)
        if (!isfinite(z[a]))
            return false;
    return true;
}

/// F = G'_SS = (W^T W)_SS from W = L^-1 H (m x n, row-major), summed over the
/// rows in order. The CPU engine uses it; the CUDA engine's W comes from cuBLAS
/// in another order, so the two agree to rounding, not to the bit.
MIMO_HD void
sumis_subspace_gram(int ns, const int* S, const double* W, int m, int n, double* F)
{
    for (int a = 0; a < ns * ns; ++a)
        F[a] = 0.0;
    for (int r = 0; r < m; ++r)
        for (int a = 0; a < ns; ++a)
            for (int b = 0; b < ns; ++b)
                F[a * ns + b] += W[size_t(r) * n + S[a]] * W[size_t(r) * n + S[b]];
}

/// Hypothesis h (0 .. L^ns - 1; the first subspace symbol's level is the
/// slowest digit) as levels.
MIMO_HD void sumis_levels(long long hl, int ns, int L, int* level)
{
    unsigned h = unsigned(hl); // < 2^20 (k_sumis_max_hypotheses): 32-bit division
    for (int a = ns - 1; a >= 0; --a) {
        level[a] = int(h % unsigned(L));
        h /= unsigned(L);
    }
}

/// s^T z - s^T B s / 2 + the log priors of the levels.
MIMO_HD double sumis_metric(int ns,
                            const int* level,
                            const double* B,
                            const double* z,
                            const pam_table& pam,
                            const double* log_prior_S /* ns x L, or null */)
{
    double s[k_sumis_max_ns];
    for (int a = 0; a < ns; ++a)
        s[a] = pam.amplitude(level[a]);
    double v = 0;
    for (int a = 0; a < ns; ++a) {
        double q = 0;
        for (int b = 0; b < ns; ++b)
            q += B[a * ns + b] * s[b];
        v += s[a] * (z[a] - 0.5 * q);
    }
    if (log_prior_S)
        for (int a = 0; a < ns; ++a)
            v += log_prior_S[a * pam.levels + level[a]];
    return v;
}

/// exp of x <= 0 for the log-sums: double on the CPU; on the GPU the float
/// intrinsic (relative error ~1e-7 per term, far below what an LLR needs; the
/// hypotheses' exponentials are most of the GPU's work).
MIMO_HD double sumis_exp(double x)
{
#if defined(__CUDA_ARCH__)
    return double(__expf(float(x)));
#else
    return exp(x);
#endif
}

/// A running log-sum-exp.
struct log_sum {
    double max = -INFINITY, sum = 0.0;
    MIMO_HD void add(double x)
    {
        if (x <= max)
            sum += sumis_exp(x - max);
        else {
            sum = sum * sumis_exp(max - x) + 1.0;
            max = x;
        }
    }
    MIMO_HD void merge(const log_sum& o)
    {
        if (o.sum == 0.0)
            return;
        if (sum == 0.0) {
            *this = o;
            return;
        }
        if (o.max <= max)
            sum += o.sum * exp(o.max - max);
        else {
            sum = sum * exp(max - o.max) + o.sum;
            max = o.max;
        }
    }
    MIMO_HD double value() const { return sum > 0.0 ? max + log(sum) : -INFINITY; }
};

/// log P(level) of one real symbol from its bits' LLRs (L = ln P0/P1), for every level.
MIMO_HD void sumis_level_log_probs(const float* bit_llr /* bits_per_dim */,
                                   const pam_table& pam,
                                   double* out)
{
    const int nb = pam.bits_per_dim;
    for (int l = 0; l < pam.levels; ++l) {
        double v = 0;
        for (int b = 0; b < nb; ++b) {
            const double a = bit_llr[b];
            const int bit = (pam.label[l] >> (nb - 1 - b)) & 1;
            // log P(bit) = -log(1 + exp(+-a)), stably
            const double x = bit ? a : -a;
            v -= x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
        }
        out[l] = v;
    }
}

/// Mean and variance of a real symbol whose levels have log probabilities lp.
MIMO_HD void
sumis_soft_symbol(const double* lp, const pam_table& pam, double* mean, double* var)
{
    double top = -INFINITY;
    for (int l = 0; l < pam.levels; ++l)
        top = lp[l] > top ? lp[l] : top;
    double w = 0, m = 0, e = 0;
    for (int l = 0; l < pam.levels; ++l) {
        const double p = exp(lp[l] - top), a = pam.amplitude(l);
        w += p;
        m += p * a;
        e += p * a * a;
    }
    m /= w;
    e /= w;
    *mean = m;
    *var = e - m * m > 0.0 ? e - m * m : 0.0;
}

/// Bit LLRs of the partition's symbol of interest (its first subspace symbol)
/// from the log-sums over the hypotheses with each of its levels: each bit's
/// LLR is the log-sum over the levels with that bit 0 minus with it 1.
MIMO_HD void sumis_bit_llrs(const double* level_lse, const pam_table& pam, double* llr)
{
    const int nb = pam.bits_per_dim;
    for (int b = 0; b < nb; ++b) {
        log_sum zero, one;
        for (int l = 0; l < pam.levels; ++l)
            (((pam.label[l] >> (nb - 1 - b)) & 1) ? one : zero).add(level_lse[l]);
        llr[b] = zero.value() - one.value();
    }
}

} // namespace detail
} // namespace mimo_gpu
