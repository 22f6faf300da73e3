// Interpolation of one antenna's pilot comb to a subcarrier, written once for
// the CPU receiver and the CUDA kernels. The comb of antenna t is the logical
// subcarriers t, t + nt, t + 2 nt, ... (ofdm_grid.h); `offsets` are the
// subcarriers' frequency offsets; the LS estimates have had the channel's mean
// delay turned out (ofdm_receiver.cc), so what is left is the spread around it.
#pragma once

#include "../runtime/host_device.h"

#include <math.h>

namespace mimo_gpu {
namespace detail {

constexpr int k_lmmse_max_window = 16;

/// Linear: the two comb pilots around subcarrier c, by frequency offset; beyond
/// the first and last pilot the nearest holds. Writes 1 or 2 (pilot index, weight)
/// pairs and returns their count.
MIMO_HD int
linear_comb_weights(int c, int t, int nt, int U, const int* offsets, int* pilot, float* w)
{
    const int lo = c >= t ? c - (c - t) % nt : -1;
    const int hi = lo < 0 ? t : (lo + nt < U ? lo + nt : -1);
    if (lo < 0 || hi < 0 || lo == c) {
        pilot[0] = lo < 0 ? hi : lo;
        w[0] = 1.0f;
        return 1;
    }
    const float a = float(offsets[c] - offsets[lo]) / float(offsets[hi] - offsets[lo]);
    pilot[0] = lo;
    w[0] = 1.0f - a;
    pilot[1] = hi;
    w[1] = a;
    return 2;
}

// One copy of sinc_pi in the GPU's code, called: inlined at each of a
// solve's 44 terms it made interpolate_kernel's code too long for the
// instruction cache (Nsight Compute: half its stalls waited for instructions).
#if defined(__CUDA_ARCH__)
#define MIMO_SINC_CALL __host__ __device__ __noinline__
#else
#define MIMO_SINC_CALL inline
#endif

/// sin(pi x) / (pi x)
MIMO_SINC_CALL float sinc_pi(float x)
{
    return fabsf(x) < 1e-6f ? 1.0f
                            : sinf(3.14159265358979f * x) / (3.14159265358979f * x);
}

/// Solves R w = r for symmetric positive definite R (W x W, its lower triangle
/// R[a * W + b], b <= a, overwritten by the Cholesky factor L, R = L L^T).
/// Capacity: N values of r and w, N * N of R. Fixed > 0: W = Fixed, loops of
/// compile-time length (registers on the GPU).
template <int N, int Fixed = 0>
MIMO_HD void cholesky_solve(float* R, const float* r, int W_given, float* w)
{
    const int W = Fixed > 0 ? Fixed : W_given;
    for (int j = 0; j < W; ++j) {
        float d = R[j * W + j];
        for (int k = 0; k < j; ++k)
            d -= R[j * W + k] * R[j * W + k];
        d = sqrtf(d > 1e-12f ? d : 1e-12f);
        R[j * W + j] = d;
        for (int i = j + 1; i < W; ++i) {
            float v = R[i * W + j];
            for (int k = 0; k < j; ++k)
                v -= R[i * W + k] * R[j * W + k];
            R[i * W + j] = v / d;
        }
    }
    for (int i = 0; i < W; ++i) {
        float v = r[i];
        for (int k = 0; k < i; ++k)
            v -= R[i * W + k] * w[k];
        w[i] = v / R[i * W + i];
    }
    for (int i = W - 1; i >= 0; --i) {
        float v = w[i];
        for (int k = i + 1; k < W; ++k)
            v -= R[k * W + i] * w[k];
        w[i] = v / R[i * W + i];
    }
}

/// The `window` pilots of antenna t's comb nearest subcarrier c (fewer if the
/// comb is shorter), ascending; returns their count. Fixed > 0: the window is
/// Fixed pilots and the comb at least as long (loops of compile-time length,
/// which the GPU compiler unrolls: the arrays stay in registers); the same
/// operations.
template <int Fixed = 0>
MIMO_HD int lmmse_comb_window(int c, int t, int nt, int U, int window, int* pilot)
{
    const int comb = (U - t + nt - 1) / nt; // pilots of antenna t
    const int W = Fixed > 0 ? Fixed : (window < comb ? window : comb);
    const int m = c >= t ? (c - t) / nt : 0; // the pilot at or below c
    int m0 = m - (W - 1) / 2;
    if (m0 < 0)
        m0 = 0;
    if (m0 > comb - W)
        m0 = comb - W;
    for (int a = 0; a < W; ++a)
        pilot[a] = t + nt * (m0 + a);
    return W;
}

/// s of lmmse_solve for one receive antenna: its LS noise per pilot
/// (antenna_ls_noise) over an antenna pair's mean channel power (the pairs'
/// mean LS power less their mean LS noise, at least 1e-3 of it). The channel's
/// power is the antennas' mean: one antenna's few paths say little of its own.
MIMO_HD float
lmmse_antenna_relative_noise(float pair_power, float ls_noise, float antenna_ls_noise)
{
    const float floor = 1e-3f * pair_power + 1e-30f;
    const float channel = pair_power - ls_noise > floor ? pair_power - ls_noise : floor;
    return antenna_ls_noise / channel;
}

/// s of lmmse_solve where every antenna has the frame's LS noise.
MIMO_HD float lmmse_relative_noise(float pair_power, float ls_noise)
{
    return lmmse_antenna_relative_noise(pair_power, ls_noise, ls_noise);
}

/// LMMSE weights r_cp^T (R_pp + s I)^-1 of W pilots at frequency offsets
/// `distance[a]` (pilot minus target, in subcarrier spacings) for a channel
/// whose delays (around the mean) are uniform over `spread` samples of an
/// N-point FFT: the correlation between subcarriers d apart is
/// sinc(d spread / N). s = the LS noise over an antenna pair's channel power.
/// Fixed > 0: W = Fixed, loops of compile-time length (registers on the GPU),
/// the same operations in the same order.
template <int Fixed = 0>
MIMO_HD void
lmmse_solve(const int* distance, int W_given, float spread_over_n, float s, float* w)
{
    constexpr int N = Fixed > 0 ? Fixed : k_lmmse_max_window;
    const int W = Fixed > 0 ? Fixed : W_given;
    if (!(s >= 1e-4f)) // at most 40 dB: keeps the sinc matrix (near singular for close
                       // pilots) well conditioned
        s = 1e-4f;
    float R[N * N], r[N];
    for (int a = 0; a < W; ++a) {
        r[a] = sinc_pi(float(distance[a]) * spread_over_n);
        for (int b = 0; b <= a; ++b)
            R[a * W + b] = sinc_pi(float(distance[a] - distance[b]) * spread_over_n) +
                           (a == b ? s : 0.0f);
    }
    cholesky_solve<N, Fixed>(R, r, W, w);
}

/// LMMSE: the `window` comb pilots nearest subcarrier c and their weights;
/// returns the pilot count (Fixed: as lmmse_comb_window).
template <int Fixed = 0>
MIMO_HD int lmmse_comb_weights(int c,
                               int t,
                               int nt,
                               int U,
                               const int* offsets,
                               int window,
                               float spread_over_n,
                               float s,
                               int* pilot,
                               float* w)
{
    const int W = lmmse_comb_window<Fixed>(c, t, nt, U, window, pilot);
    int distance[Fixed > 0 ? Fixed : k_lmmse_max_window];
    for (int a = 0; a < W; ++a)
        distance[a] = offsets[pilot[a]] - offsets[c];
    lmmse_solve<Fixed>(distance, W, spread_over_n, s, w);
    return W;
}

} // namespace detail
} // namespace mimo_gpu
