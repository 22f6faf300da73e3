// What the sphere decoders (FSD, SFSD: fsd/; K-best: kbest/) share: the
// channel ordering, the ordered QR of one problem (the item their searches
// read), the shapes their kernels are compiled for, and the CUDA kernel that
// prepares a batch's items (sphere_item.cu).
#pragma once

#include <mimo_gpu/types.h>

#include "../../qr/mgs_qr.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/host_device.h"
#include "../../runtime/scale_normaliser.h"
#include "../../runtime/shape_dispatch.h"

#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// The largest stream count the sphere decoders' kernels are compiled for (the paper's
/// 4x4).
constexpr int k_sphere_max_streams = 4;

/// The FSD ordering (the paper's reference [7]): from the top position down,
/// the `full` FE positions take the weakest remaining stream (the largest
/// diagonal element of (H_S^H H_S)^-1 over the remaining columns S), the SE
/// positions the strongest. full = 0 gives the V-BLAST order (strongest first).
/// (H^H H)^-1 is computed once (Gauss-Jordan, no pivoting: the Gram matrix of a
/// full-rank H is Hermitian positive definite); removing a stream is a Schur
/// complement update of it. Every loop has compile-time bounds, so on the GPU
/// it all stays in registers. A singular or non-finite H leaves an arbitrary
/// order; the QR flags the problem. Element i of H is read at [i * PITCH]
/// (problems interleaved in shared memory, as for mgs_qr_permuted). The order
/// does not depend on H's scale: H is first brought near 1 by a power of two
/// (the pivots' squares overflowed at |H| >= 1e10 and underflowed at <= 1e-10).
template <int NR, int NT, int PITCH = 1>
MIMO_HD void sphere_order(const float* H, int full, int (&perm)[NT])
{
    const float scale = normalising_scale(max_abs_component(H, 2 * NR * NT, PITCH));
    float ar[NT][2 * NT], ai[NT][2 * NT]; // [G | I] -> [I | G^-1]
    MIMO_UNROLL
    for (int a = 0; a < NT; ++a)
        MIMO_UNROLL
    for (int b = 0; b < NT; ++b) {
        float gr = 0.0f, gi = 0.0f;
        MIMO_UNROLL
        for (int r = 0; r < NR; ++r) {
            const float xr = scale * H[PITCH * (2 * (r * NT + a))],
                        xi = scale * H[PITCH * (2 * (r * NT + a) + 1)];
            const float zr = scale * H[PITCH * (2 * (r * NT + b))],
                        zi = scale * H[PITCH * (2 * (r * NT + b) + 1)];
            gr += xr * zr + xi * zi; // conj(x) z
            gi += xr * zi - xi * zr;
        }
        ar[a][b] = gr;
        ai[a][b] = gi;
        ar[a][NT + b] = a == b ? 1.0f : 0.0f;
        ai[a][NT + b] = 0.0f;
    }
    MIMO_UNROLL
    for (int c = 0; c < NT; ++c) {
        const float pr = ar[c][c], pi = ai[c][c], n2 = pr * pr + pi * pi;
        const float ir = pr / n2,
                    ii = -pi / n2; // 1 / pivot (NaN for a singular H: order arbitrary)
        MIMO_UNROLL
        for (int b = 0; b < 2 * NT; ++b) {
            const float xr = ar[c][b], xi = ai[c][b];
            ar[c][b] = xr * ir - xi * ii;
            ai[c][b] = xr * ii + xi * ir;
        }
        MIMO_UNROLL
        for (int a = 0; a < NT; ++a) {
            if (a == c)
                continue;
            const float fr = ar[a][c], fi = ai[a][c];
            MIMO_UNROLL
            for (int b = 0; b < 2 * NT; ++b) {
                ar[a][b] -= fr * ar[c][b] - fi * ai[c][b];
                ai[a][b] -= fr * ai[c][b] + fi * ar[c][b];
            }
        }
    }
    bool used[NT];
    MIMO_UNROLL
    for (int t = 0; t < NT; ++t)
        used[t] = false;
    MIMO_UNROLL
    for (int pos = NT - 1; pos >= 0; --pos) {
        const bool weakest = pos >= NT - full;
        int pick = -1;
        float best = 0.0f;
        MIMO_UNROLL
        for (int t = 0; t < NT; ++t) {
            const float v = ar[t][NT + t];
            if (!used[t] && (pick < 0 || (weakest ? v > best : v < best))) {
                pick = t;
                best = v;
            }
        }
        perm[pos] = pick;
        used[pick] = true;
        // Schur complement: the inverse Gram matrix of the streams left.
        const float dr = ar[pick][NT + pick], di = ai[pick][NT + pick],
                    d2 = dr * dr + di * di;
        const float ir = dr / d2, ii = -di / d2;
        MIMO_UNROLL
        for (int a = 0; a < NT; ++a)
            MIMO_UNROLL
        for (int b = 0; b < NT; ++b) {
            if (used[a] || used[b])
                continue;
            // A_ab -= A_a,pick * A_pick,b / A_pick,pick
            const float ur = ar[a][NT + pick] * ir - ai[a][NT + pick] * ii;
            const float ui = ar[a][NT + pick] * ii + ai[a][NT + pick] * ir;
            ar[a][NT + b] -= ur * ar[pick][NT + b] - ui * ai[pick][NT + b];
            ai[a][NT + b] -= ur * ai[pick][NT + b] + ui * ar[pick][NT + b];
        }
    }
}

/// dispatch_shape for the shapes the sphere decoders' kernels are compiled for (nt <= 4).
template <typename F>
decltype(auto) dispatch_sphere_shape(int nr, int nt, F&& f)
{
    return dispatch_shape(nr, nt, [&](auto nr_c, auto nt_c) -> decltype(auto) {
        constexpr int NT = decltype(nt_c)::value;
        if constexpr (NT <= k_sphere_max_streams)
            return f(nr_c, nt_c);
        else
            throw std::invalid_argument(
                "mimo_gpu: the sphere decoders (FSD, SFSD, K-best) take nt <= 4");
    });
}

/// Ordering and QR of one problem: the item the search reads (the same for
/// every nr, so the CUDA search kernels are compiled per nt only).
template <int NT>
struct sphere_item {
    static constexpr int e_floats = 2 * NT * (2 * NT + 1);
    float E[e_floats];
    int perm[NT];
    template <int NR, int PITCH = 1>
    MIMO_HD problem_fault prepare(const float* H, const float* y, int full)
    {
        sphere_order<NR, NT, PITCH>(H, full, perm);
        return mgs_qr_permuted<NR, NT, PITCH>(H, y, perm, E);
    }
};

#ifdef MIMO_GPU_HAVE_CUDA
/// Enqueues the ordering and QR of a batch (device memory) into `d_items`
/// (batch items of sphere_item<nt>), bad problems reported into `faults`.
/// full: the FE levels of the ordering (0: V-BLAST, strongest first).
void launch_sphere_prepare(mimo_shape shape,
                           int full,
                           const cfloat* d_H,
                           const cfloat* d_y,
                           size_t batch,
                           void* d_items,
                           fault_sink faults,
                           cuda_stream_t stream);
/// Bytes of one item for nt streams.
size_t sphere_item_bytes(int nt);
#endif

} // namespace detail
} // namespace mimo_gpu
