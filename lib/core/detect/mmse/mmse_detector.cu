// CUDA engine of the soft MMSE families: the host and device paths every
// implementation shares, and the hand kernels (a thread block per channel,
// its H, Gram matrix and inverse in shared memory, a warp per symbol).
#include <mimo_gpu/constellation.h>

#include "../../runtime/scale_normaliser.h"
#include "cuda_mmse_engine.h"
#include "mmse_soft_output.h"

#include <string>

namespace mimo_gpu {
namespace detail {

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
                         nullptr };
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
__device__ inline float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/// Shared memory of a block: H, A (then L, then A^-1 in Cholesky mode), L^-1,
/// a received vector per warp, and per-user values.
struct mmse_smem_layout {
    int H, A, X, y,
        floats; // float2 offsets, then the float arrays' offset (in float2 units)
    size_t bytes;
    static mmse_smem_layout of(int B, int U)
    {
        mmse_smem_layout l;
        l.H = 0;
        l.A = B * U;
        l.X = l.A + U * U;
        l.y = l.X + U * U;
        l.floats = l.y + k_mmse_warps * B;
        l.bytes = size_t(l.floats) * sizeof(float2) + (4 * size_t(U) + 2) * sizeof(float);
        return l;
    }
};

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

/// A block per channel: H to shared memory, A = H^H H + N0 I, its inverse
/// (Cholesky mode), then a warp per symbol: y_MF = H^H y, x_hat (A^-1 y_MF,
/// or CG on A), and a lane per user for the soft output.
__global__ void __launch_bounds__(k_mmse_threads)
    mmse_kernel(const __grid_constant__ mmse_kernel_args a, fault_sink faults)
{
    extern __shared__ float2 smem[];
    const int B = a.B, U = a.U, tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const size_t c = blockIdx.x;
    float2* Hs = smem + a.layout.H;
    float2* A = smem + a.layout.A;
    float2* X = smem + a.layout.X;
    float2* ys = smem + a.layout.y + warp * B;
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
            if (i == j) {
                adiag[i] = g.x; // G_uu, then A_uu below
                g = make_float2(g.x + n0, 0.0f);
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
    for (int s = warp; s < a.l.S; s += k_mmse_warps) {
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
        float2 x = make_float2(0.0f, 0.0f);
        if (fault == problem_fault::none) {
            float2 ymf = make_float2(0.0f, 0.0f);
            if (user)
                for (int b = 0; b < B; ++b) {
                    const float2 t = cmulc(Hs[b * U + lane], ys[b]);
                    ymf.x += t.x;
                    ymf.y += t.y;
                }
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
            if (!__all_sync(0xffffffffu, !user || finite2(ymf)))
                fault = problem_fault::non_finite;
        }
        if (fault != problem_fault::none && lane == 0)
            faults.report(p, fault);
        if (user) {
            float zr = 0.0f, zi = 0.0f, rh = 0.0f;
            if (fault == problem_fault::none && lam[lane] > 0.0f && rho[lane] > 0.0f) {
                zr = x.x / lam[lane];
                zi = x.y / lam[lane];
                rh = rho[lane];
            }
            const size_t o = p * U + lane;
            if (a.l.llr) {
                float* out = a.l.llr + o * Q;
                if (fault == problem_fault::none)
                    mmse_symbol_llrs(zr, zi, rh, a.pam, a.l.clip, out);
                else
                    for (int k = 0; k < Q; ++k)
                        out[k] = 0.0f;
            }
            if (a.l.z)
                a.l.z[o] = make_float2(zr, zi);
            if (a.l.sinr)
                a.l.sinr[o] = rh;
        }
        __syncwarp();
    }
}

class hand_mmse_engine final : public cuda_mmse_engine
{
public:
    explicit hand_mmse_engine(const mmse_config& config)
        : cuda_mmse_engine(config),
          m_layout(mmse_smem_layout::of(config.shape.nr, config.shape.nt))
    {
        int device = 0, limit = 0;
        MIMO_CUDA_CHECK(cudaGetDevice(&device));
        MIMO_CUDA_CHECK(cudaDeviceGetAttribute(
            &limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (m_layout.bytes > size_t(limit))
            throw std::invalid_argument(
                "mimo_gpu: detector 'mmse': a " + std::to_string(config.shape.nr) + "x" +
                std::to_string(config.shape.nt) + " channel needs " +
                std::to_string(m_layout.bytes) +
                " bytes of shared memory, this GPU has " + std::to_string(limit));
        MIMO_CUDA_CHECK(cudaFuncSetAttribute(mmse_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(m_layout.bytes)));
    }

private:
    void enqueue(const mmse_launch& l, fault_sink sink, cudaStream_t stream) override
    {
        if (l.channels == 0)
            return;
        const mmse_kernel_args args{ l,
                                     m_config.shape.nr,
                                     m_config.shape.nt,
                                     m_config.iterations,
                                     m_config.conjugate_gradient,
                                     m_layout,
                                     m_pam };
        mmse_kernel<<<unsigned(l.channels), k_mmse_threads, m_layout.bytes, stream>>>(
            args, sink);
        MIMO_CUDA_CHECK(cudaGetLastError());
    }

    mmse_smem_layout m_layout;
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
