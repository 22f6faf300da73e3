// CUDA engine of the soft MMSE families: the host and device paths every
// implementation shares, and the hand kernels (a thread block per channel,
// its H, Gram matrix and inverse in shared memory, a warp per symbol; with
// a-priori LLRs a warp per symbol runs MMSE-PIC on its own M; a thread per
// problem where there are at most four users and no priors).
#include <mimo_gpu/constellation.h>

#include "../../runtime/scale_normaliser.h"
#include "../../runtime/shape_dispatch.h"
#include "../../runtime/warp_reduce.h"
#include "cuda_mmse_engine.h"
#include "mmse_pic.h"
#include "mmse_soft_output.h"

#include <algorithm>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_mmse_warps = 8, k_mmse_threads = 32 * k_mmse_warps;

__device__ inline float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
/// conj(a) b
__device__ inline float2 cmulc(float2 a, float2 b)
{
    return make_float2(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
__device__ inline bool finite2(float2 v) { return isfinite(v.x) && isfinite(v.y); }

} // namespace

/// Shared memory of a block: H, A (then L, then A^-1 in Cholesky mode), L^-1,
/// with priors G and each warp's M and M's inverse factor (MMSE-PIC), a
/// received vector per warp, and per-user values. float2 offsets; `floats` is
/// the float arrays' offset in float2 units.
mmse_smem_layout mmse_smem_layout::of(int B, int U, int warps, bool priors)
{
    mmse_smem_layout l;
    l.warps = warps;
    l.H = 0;
    l.A = B * U;
    l.X = l.A + U * U;
    l.G = l.X + U * U;
    l.y = l.G + (priors ? U * U : 0);
    l.pic = l.y + warps * B;
    l.floats = l.pic + (priors ? warps * 2 * U * U : 0);
    l.bytes = size_t(l.floats) * sizeof(float2) + (4 * size_t(U) + 2) * sizeof(float);
    return l;
}

namespace {

struct mmse_kernel_args {
    mmse_launch l;
    int B, U, iterations;
    bool cg;
    mmse_smem_layout layout;
    pam_table pam;
};

/// Block-wide: A = L L^H in place (lower triangle; the upper keeps A's values),
/// right-looking, one barrier per column: step k updates the trailing matrix
/// with column k unscaled and divides column k-1 by its pivot, which nothing
/// reads any more. False (uniformly) if a pivot falls to the floor.
__device__ bool block_cholesky(float2* A, int U, const float* adiag, float* pivot)
{
    const int tid = threadIdx.x;
    for (int k = 0; k < U; ++k) {
        const float d = A[k * U + k].x;
        if (!(d > k_mmse_pivot_floor * adiag[k]) || !isfinite(d))
            return false; // every thread sees the same d
        const float inv_d = 1.0f / d;
        const int m = U - 1 - k;
        for (int e = tid; e < m * m; e += blockDim.x) {
            const int i = k + 1 + e / m, j = k + 1 + e % m;
            if (j <= i) {
                const float2 lik = A[i * U + k], ljk = A[j * U + k];
                const float2 v = cmul(lik, make_float2(ljk.x, -ljk.y));
                A[i * U + j].x -= v.x * inv_d;
                A[i * U + j].y -= v.y * inv_d;
            }
        }
        if (k > 0) {
            const float p = pivot[k - 1];
            for (int i = k - 1 + tid; i < U; i += blockDim.x) {
                if (i == k - 1)
                    A[i * U + i] = make_float2(p, 0.0f);
                else {
                    A[i * U + k - 1].x /= p;
                    A[i * U + k - 1].y /= p;
                }
            }
        }
        if (tid == 0)
            pivot[k] = sqrtf(d);
        __syncthreads();
    }
    if (tid == 0)
        A[(U - 1) * U + U - 1] = make_float2(pivot[U - 1], 0.0f);
    __syncthreads();
    return true;
}

/// Block-wide: X = L^-1 (lower), row by row, then A^-1 = X^H X into A.
__device__ void block_inverse(float2* A, float2* X, int U)
{
    const int tid = threadIdx.x;
    for (int i = 0; i < U; ++i) {
        if (tid <= i) {
            const int u = tid;
            const float inv = 1.0f / A[i * U + i].x;
            if (u == i)
                X[i * U + i] = make_float2(inv, 0.0f);
            else {
                float2 v = make_float2(0.0f, 0.0f);
                for (int k = u; k < i; ++k) {
                    const float2 t = cmul(A[i * U + k], X[k * U + u]);
                    v.x += t.x;
                    v.y += t.y;
                }
                X[i * U + u] = make_float2(-v.x * inv, -v.y * inv);
            }
        }
        __syncthreads();
    }
    for (int e = tid; e < U * U; e += blockDim.x) {
        const int i = e / U, j = e % U;
        float2 v = make_float2(0.0f, 0.0f);
        for (int k = i > j ? i : j; k < U; ++k) {
            const float2 t = cmulc(X[k * U + i], X[k * U + j]);
            v.x += t.x;
            v.y += t.y;
        }
        A[e] = v;
    }
    __syncthreads();
}

/// Warp-wide MMSE-PIC of one problem (mmse_pic.h), a lane per user: M = D G D
/// + N0 I into Mw, its Cholesky factor in place, X = L^-1 into Xw (a lane per
/// column), then a lane per row of M^-1 = X^H X, formed on the fly for v, t_u
/// and (M^-1)_uu; the extrinsic LLRs at llr (U * Q). Singular when a pivot falls
/// to the floor (uniformly across the warp).
__device__ problem_fault warp_pic(const float2* G,
                                  float2* Mw,
                                  float2* Xw,
                                  int U,
                                  float n0,
                                  float2 ymf,
                                  const float* priors,
                                  const pam_table& pam,
                                  float clip,
                                  float* llr)
{
    const unsigned all = 0xffffffffu;
    const int lane = threadIdx.x % 32, Q = pam.bits_per_symbol();
    const bool user = lane < U;
    soft_symbol prior = { 0.0f, 0.0f, 1.0f };
    if (user)
        prior = soft_symbol_from_priors(priors + lane * Q, pam);
    const float d = sqrtf(prior.variance);
    float2 r = ymf; // y_MF - G x_bar
    for (int j = 0; j < U; ++j) {
        const float xr = __shfl_sync(all, prior.re, j),
                    xi = __shfl_sync(all, prior.im, j);
        const float dj = __shfl_sync(all, d, j);
        if (user) {
            const float2 g = G[lane * U + j];
            r.x -= g.x * xr - g.y * xi;
            r.y -= g.x * xi + g.y * xr;
            Mw[lane * U + j] = make_float2(d * g.x * dj, d * g.y * dj);
        }
    }
    float diagonal = 0.0f;
    if (user) {
        Mw[lane * U + lane].x += n0;
        diagonal = Mw[lane * U + lane].x;
    }
    const float2 w = make_float2(d * r.x, d * r.y);
    __syncwarp();
    for (int k = 0; k < U; ++k) { // right-looking, the trailing rows a lane each
        const float pivot = Mw[k * U + k].x;
        const float least = k_mmse_pivot_floor * __shfl_sync(all, diagonal, k);
        if (!(pivot > least) || !isfinite(pivot))
            return problem_fault::singular;
        const float lkk = sqrtf(pivot);
        __syncwarp();
        if (lane > k && user) {
            Mw[lane * U + k].x /= lkk;
            Mw[lane * U + k].y /= lkk;
        }
        if (lane == k)
            Mw[k * U + k] = make_float2(lkk, 0.0f);
        __syncwarp();
        if (lane > k && user) {
            const float2 lik = Mw[lane * U + k];
            for (int j = k + 1; j <= lane; ++j) {
                const float2 v =
                    cmul(lik, make_float2(Mw[j * U + k].x, -Mw[j * U + k].y));
                Mw[lane * U + j].x -= v.x;
                Mw[lane * U + j].y -= v.y;
            }
        }
        __syncwarp();
    }
    if (user) { // column `lane` of X = L^-1
        Xw[lane * U + lane] = make_float2(1.0f / Mw[lane * U + lane].x, 0.0f);
        for (int i = lane + 1; i < U; ++i) {
            float2 v = make_float2(0.0f, 0.0f);
            for (int k = lane; k < i; ++k) {
                const float2 t = cmul(Mw[i * U + k], Xw[k * U + lane]);
                v.x += t.x;
                v.y += t.y;
            }
            const float inv = 1.0f / Mw[i * U + i].x;
            Xw[i * U + lane] = make_float2(-v.x * inv, -v.y * inv);
        }
    }
    __syncwarp();
    float2 v = make_float2(0.0f, 0.0f); // (M^-1 D r)_u
    float t = 0.0f, minv_diagonal = 0.0f;
    for (int j = 0; j < U; ++j) {
        const float2 wj = make_float2(__shfl_sync(all, w.x, j), __shfl_sync(all, w.y, j));
        const float dj = __shfl_sync(all, d, j);
        if (user) {
            float2 m = make_float2(0.0f, 0.0f); // (M^-1)_uj
            for (int k = lane > j ? lane : j; k < U; ++k) {
                const float2 e = cmulc(Xw[k * U + lane], Xw[k * U + j]);
                m.x += e.x;
                m.y += e.y;
            }
            const float2 e = cmul(m, wj);
            v.x += e.x;
            v.y += e.y;
            const float2 g = G[j * U + lane];
            t += dj * (m.x * g.x - m.y * g.y);
            if (j == lane)
                minv_diagonal = m.x;
        }
    }
    if (user) {
        const pic_estimate e = pic_user(prior, t, v.x, v.y, minv_diagonal, d, n0);
        mmse_pic_llrs(e.zr, e.zi, e.rho, priors + lane * Q, pam, clip, llr + lane * Q);
    }
    return problem_fault::none;
}

/// A block per channel: H to shared memory, A = H^H H + N0 I, its inverse
/// (Cholesky mode), then a warp per symbol: y_MF = H^H y, x_hat (A^-1 y_MF,
/// or CG on A) and z, SINR a lane per user, the LLRs a lane per (user, bit).
__global__ void __launch_bounds__(k_mmse_threads)
    mmse_kernel(const __grid_constant__ mmse_kernel_args a, fault_sink faults)
{
    extern __shared__ float2 smem[];
    const int B = a.B, U = a.U, tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const size_t c = blockIdx.x;
    float2* Hs = smem + a.layout.H;
    float2* A = smem + a.layout.A;
    float2* X = smem + a.layout.X;
    float2* G = smem + a.layout.G;
    float2* ys = smem + a.layout.y + warp * B;
    float2* Mw = smem + a.layout.pic + warp * 2 * U * U; // with priors
    float2* Xw = Mw + U * U;
    float* adiag = reinterpret_cast<float*>(smem + a.layout.floats);
    float* pivot = adiag + U;
    float* lam = pivot + U;
    float* rho = lam + U;
    int* flag = reinterpret_cast<int*>(rho + U);

    if (tid == 0) {
        flag[0] = 0;
        flag[1] = 0; // max |H| component, as int bits
    }
    __syncthreads();
    const float2* Hg = a.l.H + c * size_t(B) * U;
    bool finite = true;
    float max_abs = 0.0f;
    for (int i = tid; i < B * U; i += blockDim.x) {
        const float2 h = Hg[i];
        Hs[i] = h;
        finite &= finite2(h);
        max_abs = fmaxf(max_abs, fmaxf(fabsf(h.x), fabsf(h.y)));
    }
    if (!finite)
        atomicOr(flag, 1 << int(problem_fault::non_finite));
    // The CPU's scaling (scale_normaliser.h): H and y by a power of two that
    // brings max |H| near 1, N0 by its square. Non-negative floats order as ints.
    atomicMax(flag + 1, __float_as_int(finite ? max_abs : 0.0f));
    __syncthreads();
    const float scale = normalising_scale(__int_as_float(flag[1]));
    const float n0 = a.l.n0 * scale * scale;
    for (int i = tid; i < B * U; i += blockDim.x)
        Hs[i] = make_float2(scale * Hs[i].x, scale * Hs[i].y);
    __syncthreads();
    if (*flag == 0) {
        for (int e = tid; e < U * U; e += blockDim.x) {
            const int i = e / U, j = e % U;
            if (j < i)
                continue;
            float2 g = make_float2(0.0f, 0.0f);
            for (int b = 0; b < B; ++b) {
                const float2 t = cmulc(Hs[b * U + i], Hs[b * U + j]);
                g.x += t.x;
                g.y += t.y;
            }
            if (i == j)
                g.y = 0.0f;
            if (a.l.priors) { // G itself, for MMSE-PIC
                G[i * U + j] = g;
                G[j * U + i] = make_float2(g.x, -g.y);
            }
            if (i == j) {
                adiag[i] = g.x; // G_uu, then A_uu below
                g.x += n0;
            }
            A[i * U + j] = g;
            A[j * U + i] = make_float2(g.x, -g.y);
        }
        __syncthreads();
        if (a.cg) {
            if (tid < U) {
                const mmse_gain gn = mmse_gain_approximate(adiag[tid], n0);
                lam[tid] = gn.lambda;
                rho[tid] = gn.rho;
            }
        } else {
            if (tid < U)
                adiag[tid] = A[tid * U + tid].x;
            __syncthreads();
            if (block_cholesky(A, U, adiag, pivot)) {
                block_inverse(A, X, U);
                if (tid < U) {
                    const mmse_gain gn = mmse_gain_exact(A[tid * U + tid].x, n0);
                    lam[tid] = gn.lambda;
                    rho[tid] = gn.rho;
                }
            } else if (tid == 0) {
                *flag = 1 << int(problem_fault::singular);
            }
        }
    }
    __syncthreads();
    const int bad = *flag;
    const int Q = a.pam.bits_per_symbol();
    const bool user = lane < U;
    for (int s = warp; s < a.l.S; s += a.layout.warps) {
        const size_t p = c * a.l.S + s;
        problem_fault fault = bad ? ((bad & (1 << int(problem_fault::singular)))
                                         ? problem_fault::singular
                                         : problem_fault::non_finite)
                                  : problem_fault::none;
        if (!bad) {
            const float2* yg = a.l.y + p * B;
            bool ok = true;
            for (int b = lane; b < B; b += 32) {
                const float2 v = yg[b];
                ys[b] = make_float2(scale * v.x, scale * v.y);
                ok &= finite2(v);
            }
            if (!__all_sync(0xffffffffu, ok))
                fault = problem_fault::non_finite;
            __syncwarp();
        }
        const float* prior = a.l.priors ? a.l.priors + p * U * Q : nullptr;
        bool pic = false; // priors, not all zero (all zero: the plain result, exactly)
        if (prior && fault == problem_fault::none) {
            bool finite_priors = true, zero = true;
            for (int i = lane; i < U * Q; i += 32) {
                const float v = prior[i];
                finite_priors &= v - v == 0.0f;
                zero &= v == 0.0f;
            }
            if (!__all_sync(0xffffffffu, finite_priors))
                fault = problem_fault::non_finite;
            pic = !__all_sync(0xffffffffu, zero);
        }
        float2 ymf = make_float2(0.0f, 0.0f);
        if (fault == problem_fault::none) {
            if (user)
                for (int b = 0; b < B; ++b) {
                    const float2 t = cmulc(Hs[b * U + lane], ys[b]);
                    ymf.x += t.x;
                    ymf.y += t.y;
                }
            if (!__all_sync(0xffffffffu, !user || finite2(ymf)))
                fault = problem_fault::non_finite;
        }
        float2 x = make_float2(0.0f, 0.0f);
        if (fault == problem_fault::none && pic) {
            fault = warp_pic(
                G, Mw, Xw, U, n0, ymf, prior, a.pam, a.l.clip, a.l.llr + p * U * Q);
        } else if (fault == problem_fault::none) {
            if (!a.cg) {
                for (int j = 0; j < U; ++j) {
                    const float2 v = make_float2(__shfl_sync(0xffffffffu, ymf.x, j),
                                                 __shfl_sync(0xffffffffu, ymf.y, j));
                    if (user) {
                        const float2 t = cmul(A[lane * U + j], v);
                        x.x += t.x;
                        x.y += t.y;
                    }
                }
            } else { // paper Algorithm 1, lines 7-15, a lane per element
                float2 r = ymf, t = ymf;
                float rr = warp_sum(r.x * r.x + r.y * r.y);
                for (int it = 0; it < a.iterations; ++it) {
                    float2 sv = make_float2(0.0f, 0.0f);
                    for (int j = 0; j < U; ++j) {
                        const float2 v = make_float2(__shfl_sync(0xffffffffu, t.x, j),
                                                     __shfl_sync(0xffffffffu, t.y, j));
                        if (user) {
                            const float2 m = cmul(A[lane * U + j], v);
                            sv.x += m.x;
                            sv.y += m.y;
                        }
                    }
                    const float ts = warp_sum(t.x * sv.x + t.y * sv.y);
                    if (!(rr > 0.0f) || !(ts > 0.0f))
                        break;
                    const float alpha = rr / ts;
                    x.x += alpha * t.x;
                    x.y += alpha * t.y;
                    r.x -= alpha * sv.x;
                    r.y -= alpha * sv.y;
                    const float next = warp_sum(r.x * r.x + r.y * r.y);
                    const float beta = next / rr;
                    t.x = r.x + beta * t.x;
                    t.y = r.y + beta * t.y;
                    rr = next;
                }
            }
        }
        if (fault != problem_fault::none && lane == 0)
            faults.report(p, fault);
        const bool plain = !(pic && fault == problem_fault::none); // PIC wrote its LLRs
        float zr = 0.0f, zi = 0.0f, rh = 0.0f;
        if (user && fault == problem_fault::none && lam[lane] > 0.0f &&
            rho[lane] > 0.0f) {
            zr = x.x / lam[lane];
            zi = x.y / lam[lane];
            rh = rho[lane];
        }
        if (plain && a.l.llr) {
            // The symbol's U * Q LLRs a lane each (consecutive floats, coalesced):
            // a lane per user would run Q bits' level loops one after another on
            // U of the 32 lanes (256-QAM 4x4: 128 steps on 4 lanes, 16 on 32 now).
            float* out = a.l.llr + p * U * Q;
            for (int first = 0; first < U * Q; first += 32) {
                const int i = first + lane;
                const int u = min(i / Q, U - 1);
                const float uzr = __shfl_sync(0xffffffffu, zr, u),
                            uzi = __shfl_sync(0xffffffffu, zi, u),
                            urh = __shfl_sync(0xffffffffu, rh, u);
                if (i < U * Q)
                    out[i] = fault == problem_fault::none
                                 ? mmse_bit_llr(uzr, uzi, urh, a.pam, a.l.clip, i % Q)
                                 : 0.0f;
            }
        }
        if (user && plain) {
            const size_t o = p * U + lane;
            if (a.l.z)
                a.l.z[o] = make_float2(zr, zi);
            if (a.l.sinr)
                a.l.sinr[o] = rh;
        }
        __syncwarp();
    }
}

/// Users a thread-per-problem kernel takes (its matrices in registers).
constexpr int k_thread_mmse_users = 4, k_thread_mmse_antennas = 8,
              k_thread_mmse_threads = 64;

/// out = M v for a U x U complex matrix (re, im) in registers: the CPU
/// engine's multiply(), the same sums in the same order.
template <int U>
__device__ inline void thread_multiply(const float (&re)[U][U],
                                       const float (&im)[U][U],
                                       const float (&vr)[U],
                                       const float (&vi)[U],
                                       float (&out_r)[U],
                                       float (&out_i)[U])
{
#pragma unroll
    for (int i = 0; i < U; ++i) {
        float r = 0.0f, m = 0.0f;
#pragma unroll
        for (int j = 0; j < U; ++j) {
            r += re[i][j] * vr[j] - im[i][j] * vi[j];
            m += re[i][j] * vi[j] + im[i][j] * vr[j];
        }
        out_r[i] = r;
        out_i[i] = m;
    }
}

/// A thread per problem (received vector) where there are at most
/// k_thread_mmse_users users and no priors. The block kernel above gives each
/// channel a block and each of its S symbols a warp; with few users its
/// barriers and shared-memory steps left the SMs waiting (NR 100 MHz 4x4
/// 16-QAM, 85 176 vectors a frame: ~146 us a frame with a channel per slot and
/// subcarrier, S = 13, and 207 us with a channel per vector, against a floor of
/// ~6 us for its bytes over bandwidth). Here each thread runs the CPU engine's steps in
/// its order (mmse_detector.cc: the scaling, G by rank-1 updates, y_MF, a
/// left-looking Cholesky, L^-1 column by column, A^-1 = X^H X, or CG; the full
/// G for CG as the CPU forms it) with U known at compile time, so every matrix
/// sits in registers. The S threads of a channel each factor it again: with at
/// most k_thread_mmse_antennas receive antennas ~1 kflop, cheaper than the
/// barriers that sharing it cost; with more, only a channel of one symbol
/// comes here.
template <int U>
__global__ void __launch_bounds__(k_thread_mmse_threads)
    mmse_thread_kernel(const __grid_constant__ mmse_kernel_args a, fault_sink faults)
{
    const size_t p = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= a.l.channels * size_t(a.l.S))
        return;
    const int B = a.B;
    const float2* H = a.l.H + p / size_t(a.l.S) * size_t(B) * U;
    const float2* y = a.l.y + p * size_t(B);
    bool finite = true;
    float max_abs = 0.0f;
    for (int i = 0; i < B * U; ++i) {
        const float2 h = H[i];
        finite &= finite2(h);
        max_abs = fmaxf(max_abs, fmaxf(fabsf(h.x), fabsf(h.y)));
    }
    problem_fault fault = finite ? problem_fault::none : problem_fault::non_finite;
    const float scale = normalising_scale(max_abs);
    const float n0 = a.l.n0 * (scale * scale);
    // A = G + N0 I (the lower triangle and the diagonal; all of it for CG) and y_MF.
    float ar[U][U], ai[U][U], mr[U], mi[U];
#pragma unroll
    for (int i = 0; i < U; ++i) {
        mr[i] = mi[i] = 0.0f;
#pragma unroll
        for (int j = 0; j < U; ++j)
            ar[i][j] = ai[i][j] = 0.0f;
    }
    for (int b = 0; b < B; ++b) {
        float hr[U], hi[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const float2 h = H[b * U + u];
            hr[u] = scale * h.x;
            hi[u] = scale * h.y;
        }
        const float2 v = y[b];
        const float yr = scale * v.x, yi = scale * v.y;
#pragma unroll
        for (int i = 0; i < U; ++i) {
#pragma unroll
            for (int j = 0; j < U; ++j) {
                if (j > i && !a.cg)
                    continue; // the Cholesky reads the lower triangle only
                ar[i][j] += hr[i] * hr[j] + hi[i] * hi[j];
                ai[i][j] += hr[i] * hi[j] - hi[i] * hr[j];
            }
            mr[i] += hr[i] * yr + hi[i] * yi;
            mi[i] += hr[i] * yi - hi[i] * yr;
        }
    }
    float gain_lambda[U], gain_rho[U], xr[U], xi[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        ai[u][u] = 0.0f;
        const float gdiag = ar[u][u];
        ar[u][u] += n0;
        if (a.cg) {
            const mmse_gain g = mmse_gain_approximate(gdiag, n0);
            gain_lambda[u] = g.lambda;
            gain_rho[u] = g.rho;
        }
    }
    if (!a.cg && fault == problem_fault::none) {
        // A = L L^H, left-looking (the CPU's cholesky()).
        float lr[U][U], li[U][U];
        bool factored = true;
#pragma unroll
        for (int j = 0; j < U; ++j) {
            float d = ar[j][j];
#pragma unroll
            for (int k = 0; k < j; ++k)
                d -= lr[j][k] * lr[j][k] + li[j][k] * li[j][k];
            factored &= d > k_mmse_pivot_floor * ar[j][j] && isfinite(d);
            const float ljj = sqrtf(d);
            lr[j][j] = ljj;
            li[j][j] = 0.0f;
#pragma unroll
            for (int i = j + 1; i < U; ++i) {
                float vr = ar[i][j], vi = ai[i][j];
#pragma unroll
                for (int k = 0; k < j; ++k) { // L_ik conj(L_jk)
                    vr -= lr[i][k] * lr[j][k] + li[i][k] * li[j][k];
                    vi -= li[i][k] * lr[j][k] - lr[i][k] * li[j][k];
                }
                lr[i][j] = vr / ljj;
                li[i][j] = vi / ljj;
            }
        }
        if (!factored) {
            fault = problem_fault::singular;
        } else {
            // X = L^-1 (lower), column by column; A^-1 = X^H X into ar/ai.
            float wr[U][U], wi[U][U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                wr[u][u] = 1.0f / lr[u][u];
                wi[u][u] = 0.0f;
#pragma unroll
                for (int i = u + 1; i < U; ++i) {
                    float vr = 0.0f, vi = 0.0f;
#pragma unroll
                    for (int k = u; k < i; ++k) { // L_ik X_ku
                        vr += lr[i][k] * wr[k][u] - li[i][k] * wi[k][u];
                        vi += lr[i][k] * wi[k][u] + li[i][k] * wr[k][u];
                    }
                    const float inv = 1.0f / lr[i][i];
                    wr[i][u] = -vr * inv;
                    wi[i][u] = -vi * inv;
                }
            }
#pragma unroll
            for (int i = 0; i < U; ++i)
#pragma unroll
                for (int j = 0; j < U; ++j) {
                    float vr = 0.0f, vi = 0.0f;
#pragma unroll
                    for (int k = i > j ? i : j; k < U; ++k) { // conj(X_ki) X_kj
                        vr += wr[k][i] * wr[k][j] + wi[k][i] * wi[k][j];
                        vi += wr[k][i] * wi[k][j] - wi[k][i] * wr[k][j];
                    }
                    ar[i][j] = vr;
                    ai[i][j] = vi;
                }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const mmse_gain g = mmse_gain_exact(ar[u][u], n0);
                gain_lambda[u] = g.lambda;
                gain_rho[u] = g.rho;
            }
        }
    }
    if (fault == problem_fault::none) {
#pragma unroll
        for (int u = 0; u < U; ++u)
            finite &= isfinite(mr[u]) && isfinite(mi[u]);
        if (!finite)
            fault = problem_fault::non_finite;
    }
    if (fault == problem_fault::none && !a.cg) { // x = A^-1 y_MF
        thread_multiply<U>(ar, ai, mr, mi, xr, xi);
    } else if (fault == problem_fault::none) {  // paper Algorithm 1, lines 7-15
        float res_r[U], res_i[U], tr[U], ti[U]; // the residual r and direction t
        float rr = 0.0f;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            xr[u] = xi[u] = 0.0f;
            res_r[u] = tr[u] = mr[u];
            res_i[u] = ti[u] = mi[u];
            rr += mr[u] * mr[u];
            rr += mi[u] * mi[u];
        }
        for (int it = 0; it < a.iterations; ++it) {
            float sr[U], si[U], ts = 0.0f;
            thread_multiply<U>(ar, ai, tr, ti, sr, si);
#pragma unroll
            for (int u = 0; u < U; ++u) {
                ts += tr[u] * sr[u];
                ts += ti[u] * si[u];
            }
            if (!(rr > 0.0f) || !(ts > 0.0f))
                break;
            const float alpha = rr / ts;
            float next = 0.0f;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                xr[u] += alpha * tr[u];
                xi[u] += alpha * ti[u];
                res_r[u] -= alpha * sr[u];
                res_i[u] -= alpha * si[u];
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                next += res_r[u] * res_r[u];
                next += res_i[u] * res_i[u];
            }
            const float beta = next / rr;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                tr[u] = res_r[u] + beta * tr[u];
                ti[u] = res_i[u] + beta * ti[u];
            }
            rr = next;
        }
    }
    if (fault != problem_fault::none)
        faults.report(p, fault);
    const int Q = a.pam.bits_per_symbol();
#pragma unroll
    for (int u = 0; u < U; ++u) {
        float zr = 0.0f, zi = 0.0f, rho = 0.0f;
        if (fault == problem_fault::none && gain_lambda[u] > 0.0f && gain_rho[u] > 0.0f) {
            zr = xr[u] / gain_lambda[u];
            zi = xi[u] / gain_lambda[u];
            rho = gain_rho[u];
        }
        if (a.l.llr) {
            float* out = a.l.llr + (p * U + u) * Q;
            for (int k = 0; k < Q; ++k)
                out[k] = fault == problem_fault::none
                             ? mmse_bit_llr(zr, zi, rho, a.pam, a.l.clip, k)
                             : 0.0f;
        }
        if (a.l.z)
            a.l.z[p * U + u] = make_float2(zr, zi);
        if (a.l.sinr)
            a.l.sinr[p * U + u] = rho;
    }
}

} // namespace

cuda_mmse_engine::cuda_mmse_engine(const mmse_config& config, size_t scratch_per_channel)
    : cuda_detector_engine(
          config.shape,
          config.mod,
          { true, true, true }, // a channel's kernel reads H and y more than once and
                                // zeroes the outputs of the problems it reports
          size_t(config.shape.nt) * (sizeof(cfloat) + sizeof(float)) +
              scratch_per_channel),
      m_config(config)
{
    int device = 0, limit = 0;
    MIMO_CUDA_CHECK(cudaGetDevice(&device));
    MIMO_CUDA_CHECK(
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    m_shared_limit = size_t(limit);
    const int B = config.shape.nr, U = config.shape.nt;
    m_plain = mmse_smem_layout::of(B, U, k_mmse_warps, false);
    int warps = k_mmse_warps; // with priors, a warp's scratch is 2 U^2 values
    while (warps > 1 && mmse_smem_layout::of(B, U, warps, true).bytes > m_shared_limit)
        --warps;
    m_with_priors = mmse_smem_layout::of(B, U, warps, true);
    const size_t most = std::max(m_plain.bytes, m_with_priors.bytes);
    MIMO_CUDA_CHECK(cudaFuncSetAttribute(mmse_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(std::min(most, m_shared_limit))));
}

void cuda_mmse_engine::launch(const detector_input& in,
                              float clip,
                              float* d_llr,
                              fault_sink sink,
                              cudaStream_t stream)
{
    const mmse_launch l{ reinterpret_cast<const float2*>(in.H),
                         reinterpret_cast<const float2*>(in.y),
                         in.channels,
                         in.symbols_per_channel,
                         in.n0,
                         clip,
                         d_llr,
                         nullptr,
                         nullptr,
                         in.priors };
    if (in.priors) // MMSE-PIC: the hand kernel, whichever implementation runs the rest
        enqueue_hand(l, sink, stream);
    else
        enqueue(l, sink, stream);
}

detection_report cuda_mmse_engine::equalize(const detector_input& in,
                                            const mmse_outputs& out)
{
    const size_t P = in.problems(), U = m_config.shape.nt;
    return host_call(P, nullptr, [&](fault_sink sink, cudaStream_t s) {
        const detector_input d = device_inputs(in, s);
        const mmse_launch l{ reinterpret_cast<const float2*>(d.H),
                             reinterpret_cast<const float2*>(d.y),
                             in.channels,
                             in.symbols_per_channel,
                             in.n0,
                             0.0f,
                             nullptr,
                             out.z ? reinterpret_cast<float2*>(m_z.reserve(P * U))
                                   : nullptr,
                             out.sinr ? m_sinr.reserve(P * U) : nullptr };
        enqueue(l, sink, s); // the kernels zero the bad problems' outputs
        if (out.z)
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                out.z, l.z, P * U * sizeof(cfloat), cudaMemcpyDeviceToHost, s));
        if (out.sinr)
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                out.sinr, l.sinr, P * U * sizeof(float), cudaMemcpyDeviceToHost, s));
    });
}

void cuda_mmse_engine::enqueue_hand(const mmse_launch& l,
                                    fault_sink sink,
                                    cudaStream_t stream)
{
    if (l.channels == 0)
        return;
    const int U = m_config.shape.nt;
    const auto args_with = [&](const mmse_smem_layout& layout) {
        return mmse_kernel_args{ l,
                                 m_config.shape.nr,
                                 U,
                                 m_config.iterations,
                                 m_config.conjugate_gradient,
                                 layout,
                                 m_pam };
    };
    if (!l.priors && U <= k_thread_mmse_users &&
        (l.S == 1 || m_config.shape.nr <= k_thread_mmse_antennas)) {
        const size_t problems = l.channels * size_t(l.S);
        const unsigned blocks =
            unsigned((problems + k_thread_mmse_threads - 1) / k_thread_mmse_threads);
        dispatch_nt(U, [&](auto users) {
            constexpr int UC = decltype(users)::value;
            if constexpr (UC <= k_thread_mmse_users)
                mmse_thread_kernel<UC><<<blocks, k_thread_mmse_threads, 0, stream>>>(
                    args_with(m_plain), sink);
        });
        MIMO_CUDA_CHECK(cudaGetLastError());
        return;
    }
    // A warp per symbol of a channel: a channel of fewer symbols than the
    // layout's warps gets as many warps as it has symbols (at least one: a lane
    // per user), not idle ones, so that more blocks share an SM. With a channel
    // per symbol (S = 1: a front end interpolating in time) a block of 8 warps
    // kept 7 idle and the detector took 1.2 ms an NR 100 MHz 4x4 frame.
    mmse_smem_layout layout = l.priors ? m_with_priors : m_plain;
    if (l.S < layout.warps)
        layout = mmse_smem_layout::of(
            m_config.shape.nr, m_config.shape.nt, std::max(l.S, 1), l.priors != nullptr);
    if (layout.bytes > m_shared_limit)
        throw std::invalid_argument(
            "mimo_gpu: detector 'mmse': a " + std::to_string(m_config.shape.nr) + "x" +
            std::to_string(m_config.shape.nt) + " channel" +
            (l.priors ? " with a-priori LLRs" : "") + " needs " +
            std::to_string(layout.bytes) + " bytes of shared memory, this GPU has " +
            std::to_string(m_shared_limit));
    mmse_kernel<<<unsigned(l.channels), 32 * layout.warps, layout.bytes, stream>>>(
        args_with(layout), sink);
    MIMO_CUDA_CHECK(cudaGetLastError());
}

namespace {

class hand_mmse_engine final : public cuda_mmse_engine
{
public:
    explicit hand_mmse_engine(const mmse_config& config) : cuda_mmse_engine(config)
    {
        if (m_plain.bytes > m_shared_limit)
            throw std::invalid_argument(
                "mimo_gpu: detector 'mmse': a " + std::to_string(config.shape.nr) + "x" +
                std::to_string(config.shape.nt) + " channel needs " +
                std::to_string(m_plain.bytes) + " bytes of shared memory, this GPU has " +
                std::to_string(m_shared_limit));
    }

private:
    void enqueue(const mmse_launch& l, fault_sink sink, cudaStream_t stream) override
    {
        enqueue_hand(l, sink, stream);
    }
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_mmse_engine(const mmse_config& config)
{
    if (config.library)
        return make_library_mmse_engine(config);
    return std::make_unique<hand_mmse_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
