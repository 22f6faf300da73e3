// Modified Gram-Schmidt QR of one problem's real-valued (MRVD) model for one
// detection order (paper: nway-mimo-detector-gpu, Algorithm 1, Section IV.A).
// Shared by the CPU engine (a loop over problems) and the CUDA kernel (a thread
// per problem and order).
#pragma once

#include "../runtime/host_device.h"
#include "../runtime/problem_status.h"

#include <cmath>

namespace mimo_gpu {
namespace detail {

/// A column whose residual norm^2 falls below this fraction of the largest
/// column norm^2 of H makes the problem rank-deficient (float round-off of an
/// exactly dependent column sits near 1e-14).
constexpr float k_singular_threshold = 1e-11f;

/// H: nr*nt complex (interleaved floats, row-major), y: nr complex; element i
/// of H and y is read at [i * PITCH] (PITCH > 1: problems interleaved in shared
/// memory, so that a thread per problem reads without bank conflicts).
/// Writes E = [R | Q^T y~] (2NT rows of 2NT+1 floats) with stream perm[j] at
/// position j (the tree's top level is position NT-1).
template <int NR, int NT, int PITCH = 1>
MIMO_HD problem_fault
mgs_qr_permuted(const float* H, const float* y, const int* perm, float* E)
{
    constexpr int ROWS = 2 * NR, COLS = 2 * NT, W = COLS + 1;
    float v[W][ROWS]; // columns of V = [H~ | y~]

    MIMO_UNROLL
    for (int r = 0; r < NR; ++r) {
        MIMO_UNROLL
        for (int j = 0; j < NT; ++j) {
            const int t = perm[j];
            const float hr = H[PITCH * (2 * (r * NT + t))],
                        hi = H[PITCH * (2 * (r * NT + t) + 1)];
            v[2 * j][2 * r] = hr;
            v[2 * j][2 * r + 1] = hi;
            v[2 * j + 1][2 * r] = -hi;
            v[2 * j + 1][2 * r + 1] = hr;
        }
        v[COLS][2 * r] = y[PITCH * (2 * r)];
        v[COLS][2 * r + 1] = y[PITCH * (2 * r + 1)];
    }

    float max_norm2 = 0.0f, total = 0.0f;
    MIMO_UNROLL
    for (int c = 0; c < W; ++c) {
        float n2 = 0.0f;
        MIMO_UNROLL
        for (int r = 0; r < ROWS; ++r)
            n2 += v[c][r] * v[c][r];
        if (c < COLS)
            max_norm2 = n2 > max_norm2 ? n2 : max_norm2;
        total += n2;
    }
    if (!(total < k_infinity)) // NaN or Inf anywhere in H or y
        return problem_fault::non_finite;

    bool singular = false;
    MIMO_UNROLL
    for (int i = 0; i < COLS; ++i) {
        float n2 = 0.0f;
        MIMO_UNROLL
        for (int r = 0; r < ROWS; ++r)
            n2 += v[i][r] * v[i][r];
        singular |= !(n2 > k_singular_threshold * max_norm2);
        const float rii = sqrtf(n2);
        const float inv = 1.0f / rii;
        MIMO_UNROLL
        for (int r = 0; r < ROWS; ++r)
            v[i][r] *= inv;
        MIMO_UNROLL
        for (int k = 0; k < i; ++k)
            E[i * W + k] = 0.0f;
        E[i * W + i] = rii;
        MIMO_UNROLL
        for (int k = i + 1; k < W; ++k) {
            float dot = 0.0f;
            MIMO_UNROLL
            for (int r = 0; r < ROWS; ++r)
                dot += v[i][r] * v[k][r];
            E[i * W + k] = dot;
            MIMO_UNROLL
            for (int r = 0; r < ROWS; ++r)
                v[k][r] -= dot * v[i][r];
        }
    }
    return singular ? problem_fault::singular : problem_fault::none;
}

/// The N-way detection orders: order o puts stream (j + o) % NT at position j.
template <int NR, int NT, int PITCH = 1>
MIMO_HD problem_fault mgs_qr_order(const float* H, const float* y, int order, float* E)
{
    int perm[NT];
    MIMO_UNROLL
    for (int j = 0; j < NT; ++j)
        perm[j] = (j + order) % NT;
    return mgs_qr_permuted<NR, NT, PITCH>(H, y, perm, E);
}

} // namespace detail
} // namespace mimo_gpu

namespace mimo_gpu {
namespace detail {

/// The checks of mgs_qr_order for detectors that need no QR (the exhaustive
/// ML): a non-finite value in H or y, then the same rank test on the complex
/// columns of H (modified Gram-Schmidt, a residual norm^2 below
/// k_singular_threshold of the largest column norm^2). nt <= nr <= 8.
MIMO_HD problem_fault channel_fault(const float* H, const float* y, int nr, int nt)
{
    constexpr int MAX = 8;
    float re[MAX][MAX], im[MAX][MAX]; // column j, row r
    float total = 0.0f, max_norm2 = 0.0f;
    for (int r = 0; r < nr; ++r)
        total += y[2 * r] * y[2 * r] + y[2 * r + 1] * y[2 * r + 1];
    for (int j = 0; j < nt; ++j) {
        float n2 = 0.0f;
        for (int r = 0; r < nr; ++r) {
            re[j][r] = H[2 * (r * nt + j)];
            im[j][r] = H[2 * (r * nt + j) + 1];
            n2 += re[j][r] * re[j][r] + im[j][r] * im[j][r];
        }
        max_norm2 = n2 > max_norm2 ? n2 : max_norm2;
        total += n2;
    }
    if (!(total < k_infinity))
        return problem_fault::non_finite;
    for (int i = 0; i < nt; ++i) {
        float n2 = 0.0f;
        for (int r = 0; r < nr; ++r)
            n2 += re[i][r] * re[i][r] + im[i][r] * im[i][r];
        if (!(n2 > k_singular_threshold * max_norm2))
            return problem_fault::singular;
        const float inv = 1.0f / sqrtf(n2);
        for (int r = 0; r < nr; ++r) {
            re[i][r] *= inv;
            im[i][r] *= inv;
        }
        for (int k = i + 1; k < nt; ++k) {
            float dr = 0.0f, di = 0.0f; // <v_i, v_k> = sum conj(v_i) v_k
            for (int r = 0; r < nr; ++r) {
                dr += re[i][r] * re[k][r] + im[i][r] * im[k][r];
                di += re[i][r] * im[k][r] - im[i][r] * re[k][r];
            }
            for (int r = 0; r < nr; ++r) {
                re[k][r] -= dr * re[i][r] - di * im[i][r];
                im[k][r] -= dr * im[i][r] + di * re[i][r];
            }
        }
    }
    return problem_fault::none;
}

} // namespace detail
} // namespace mimo_gpu
