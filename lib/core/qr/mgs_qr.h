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
/// Writes E = [R | Q^T y~] (2NT rows of 2NT+1 floats) for detection order `order`.
template <int NR, int NT, int PITCH = 1>
MIMO_HD problem_fault mgs_qr_order(const float* H, const float* y, int order, float* E)
{
    constexpr int ROWS = 2 * NR, COLS = 2 * NT, W = COLS + 1;
    float v[W][ROWS]; // columns of V = [H~ | y~]

MIMO_UNROLL
    for (int r = 0; r < NR; ++r) {
MIMO_UNROLL
        for (int j = 0; j < NT; ++j) {
            const int t = (j + order) % NT;
            const float hr = H[PITCH * (2 * (r * NT + t))], hi = H[PITCH * (2 * (r * NT + t) + 1)];
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

} // namespace detail
} // namespace mimo_gpu
