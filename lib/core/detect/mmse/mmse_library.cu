// The soft MMSE detector written the way a user of NVIDIA's libraries would
// write it (the paper's own structure): cuBLAS batched GEMMs for the Gram
// matrices, the matched filters and the CG products, cuSOLVER's batched
// Cholesky and cuBLAS batched triangular solves, and small kernels between
// them. mimo_gpu_bench compares it with the hand kernels (docs/benchmarks.md).
//
// Layouts: a channel's row-major B x U matrix H is, column-major, the U x B
// matrix H^T, so cuBLAS sees H^T, conj(G) = H^T conj(H) (A_c = conj(G) + N0 I,
// Hermitian like A) and Z = Y_MF^T (S x U, column-major: user u's S values
// contiguous). A x = y_MF for every symbol is X^T = Z A_c^-1.
#include <mimo_gpu/constellation.h>

#include "cuda_mmse_engine.h"
#include "mmse_soft_output.h"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {

void check_cublas(cublasStatus_t s, const char* call)
{
    if (s != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string("mimo_gpu: ") + call +
                                 " failed (cuBLAS status " + std::to_string(int(s)) +
                                 ")");
}
void check_cusolver(cusolverStatus_t s, const char* call)
{
    if (s != CUSOLVER_STATUS_SUCCESS)
        throw std::runtime_error(std::string("mimo_gpu: ") + call +
                                 " failed (cuSOLVER status " + std::to_string(int(s)) +
                                 ")");
}
#define MIMO_CUBLAS(call) check_cublas((call), #call)
#define MIMO_CUSOLVER(call) check_cusolver((call), #call)

__global__ void
pointer_array_kernel(float2* base, size_t stride, size_t count, float2** out)
{
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count)
        out[i] = base + i * stride;
}

/// A_c = conj(G) + N0 I in place; gdiag = G_uu; the Cholesky mode's pivot floor
/// needs A's diagonal (adiag), the identity right-hand sides (for L^-1) are set too.
__global__ void regularise_kernel(float2* A,
                                  size_t channels,
                                  int U,
                                  float n0,
                                  float* gdiag,
                                  float* adiag,
                                  float2* identity)
{
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= channels * U * U)
        return;
    const size_t c = i / (U * U);
    const int e = int(i % (U * U)), row = e % U, col = e / U;
    if (identity)
        identity[i] = make_float2(row == col ? 1.0f : 0.0f, 0.0f);
    if (row == col) {
        const float g = A[i].x;
        gdiag[c * U + row] = g;
        A[i] = make_float2(g + n0, 0.0f);
        adiag[c * U + row] = g + n0;
    }
}

/// CG on the rows of Z (one symbol each): state X, R, T (S x U per channel),
/// rr per symbol; `first`: the initialisation X = 0, R = T = Z; else one step
/// with SM = T A_c from the GEMM just before (paper Algorithm 1, lines 9-14).
__global__ void cg_step_kernel(size_t channels,
                               int S,
                               int U,
                               bool first,
                               const float2* Z,
                               const float2* SM,
                               float2* X,
                               float2* R,
                               float2* T,
                               float* rr)
{
    const size_t p = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= channels * S)
        return;
    const size_t c = p / S, s = p % S, base = c * size_t(S) * U + s;
    if (first) {
        float n = 0.0f;
        for (int u = 0; u < U; ++u) {
            const float2 z = Z[base + size_t(u) * S];
            X[base + size_t(u) * S] = make_float2(0.0f, 0.0f);
            R[base + size_t(u) * S] = z;
            T[base + size_t(u) * S] = z;
            n += z.x * z.x + z.y * z.y;
        }
        rr[p] = n;
        return;
    }
    float ts = 0.0f;
    for (int u = 0; u < U; ++u) {
        const float2 t = T[base + size_t(u) * S], m = SM[base + size_t(u) * S];
        ts += t.x * m.x + t.y * m.y;
    }
    const float r0 = rr[p];
    if (!(r0 > 0.0f) || !(ts > 0.0f)) {
        rr[p] = 0.0f; // converged (or stalled): later steps leave x as it is
        return;
    }
    const float alpha = r0 / ts;
    float next = 0.0f;
    for (int u = 0; u < U; ++u) {
        const size_t o = base + size_t(u) * S;
        const float2 t = T[o], m = SM[o];
        X[o] = make_float2(X[o].x + alpha * t.x, X[o].y + alpha * t.y);
        const float2 r = make_float2(R[o].x - alpha * m.x, R[o].y - alpha * m.y);
        R[o] = r;
        next += r.x * r.x + r.y * r.y;
    }
    const float beta = next / r0;
    for (int u = 0; u < U; ++u) {
        const size_t o = base + size_t(u) * S;
        T[o] = make_float2(R[o].x + beta * T[o].x, R[o].y + beta * T[o].y);
    }
    rr[p] = next;
}

/// A thread per symbol: the gains (from L^-1 or the Gram diagonal), the soft
/// output, the fault checks. Non-finite input first, as the CPU engine orders
/// them: a non-finite H shows in its Gram diagonal (every entry of H adds to
/// one), a non-finite y in the matched filter Z (CG mode; the Cholesky mode
/// solves in place, so Z is x_hat there and checked below). CG would otherwise
/// stall on a NaN residual and return a finite x_hat = 0. Then potrf's info and
/// the pivot floor, then a non-finite x_hat.
__global__ void soft_output_kernel(size_t channels,
                                   int S,
                                   int U,
                                   bool cg,
                                   float n0,
                                   float clip,
                                   const __grid_constant__ pam_table pam,
                                   const float2* Z,
                                   const float2* Xt,
                                   const float2* Linv,
                                   const float2* L,
                                   const float* gdiag,
                                   const float* adiag,
                                   const int* info,
                                   float* llr,
                                   float2* z,
                                   float* sinr,
                                   fault_sink faults)
{
    const size_t p = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= channels * S)
        return;
    const size_t c = p / S, s = p % S, base = c * size_t(S) * U + s;
    const int Q = pam.bits_per_symbol();
    problem_fault fault = problem_fault::none;
    for (int u = 0; u < U && fault == problem_fault::none; ++u) {
        bool finite = isfinite(gdiag[c * U + u]);
        if (cg) {
            const float2 m = Z[base + size_t(u) * S];
            finite = finite && isfinite(m.x) && isfinite(m.y);
        }
        if (!finite)
            fault = problem_fault::non_finite;
    }
    if (!cg && fault == problem_fault::none) {
        bool singular = info[c] != 0;
        for (int k = 0; k < U && !singular; ++k) {
            const float d = L[c * U * U + size_t(k) * U + k].x;
            singular = !(d * d > k_mmse_pivot_floor * adiag[c * U + k]) || !isfinite(d);
        }
        if (singular)
            fault = problem_fault::singular;
    }
    for (int u = 0; u < U && fault == problem_fault::none; ++u) {
        const float2 x = Xt[base + size_t(u) * S];
        if (!isfinite(x.x) || !isfinite(x.y))
            fault = problem_fault::non_finite;
    }
    if (fault != problem_fault::none)
        faults.report(p, fault);
    for (int u = 0; u < U; ++u) {
        float zr = 0.0f, zi = 0.0f, rh = 0.0f;
        if (fault == problem_fault::none) {
            mmse_gain g;
            if (cg)
                g = mmse_gain_approximate(gdiag[c * U + u], n0);
            else {
                float a = 0.0f; // (A^-1)_uu = sum_k |(L^-1)_ku|^2, column u of L^-1
                const float2* col = Linv + c * U * U + size_t(u) * U;
                for (int k = u; k < U; ++k)
                    a += col[k].x * col[k].x + col[k].y * col[k].y;
                g = mmse_gain_exact(a, n0);
            }
            if (g.lambda > 0.0f && g.rho > 0.0f) {
                const float2 x = Xt[base + size_t(u) * S];
                // X^T holds conj-free x_hat: A_c = conj(A) and Z = Y_MF^T give X^T =
                // (A^-1 Y_MF)^T.
                zr = x.x / g.lambda;
                zi = x.y / g.lambda;
                rh = g.rho;
            }
        }
        const size_t o = p * U + u;
        if (llr) {
            if (fault == problem_fault::none)
                mmse_symbol_llrs(zr, zi, rh, pam, clip, llr + o * Q);
            else
                for (int k = 0; k < Q; ++k)
                    llr[o * Q + k] = 0.0f;
        }
        if (z)
            z[o] = make_float2(zr, zi);
        if (sinr)
            sinr[o] = rh;
    }
}

unsigned blocks_for(size_t n, int threads)
{
    return unsigned((n + threads - 1) / threads);
}

class library_mmse_engine final : public cuda_mmse_engine
{
public:
    explicit library_mmse_engine(const mmse_config& config)
        : cuda_mmse_engine(config, scratch_per_channel(config.shape.nt))
    {
        MIMO_CUBLAS(cublasCreate(&m_blas));
        try {
            MIMO_CUSOLVER(cusolverDnCreate(&m_solver));
        } catch (...) {
            cublasDestroy(m_blas);
            throw;
        }
    }
    ~library_mmse_engine() override
    {
        cusolverDnDestroy(m_solver);
        cublasDestroy(m_blas);
    }

private:
    static size_t scratch_per_channel(size_t U)
    {
        return (3 * U * U) * sizeof(float2) + 2 * U * sizeof(float) + 3 * sizeof(void*) +
               sizeof(int);
    }

    void enqueue(const mmse_launch& l, fault_sink sink, cudaStream_t stream) override
    {
        const size_t C = l.channels, S = size_t(l.S), P = C * S;
        if (C == 0)
            return;
        const int B = m_config.shape.nr, U = m_config.shape.nt;
        const bool cg = m_config.conjugate_gradient;
        MIMO_CUBLAS(cublasSetStream(m_blas, stream));
        MIMO_CUSOLVER(cusolverDnSetStream(m_solver, stream));
        float2* A = m_A.reserve(C * U * U);
        float2* I = cg ? nullptr : m_I.reserve(C * U * U);
        float2* Z = m_Z.reserve(P * U);
        float* gdiag = m_gdiag.reserve(C * U);
        float* adiag = m_adiag.reserve(C * U);
        const cuComplex one = make_cuComplex(1.0f, 0.0f),
                        zero = make_cuComplex(0.0f, 0.0f);
        const auto* H = reinterpret_cast<const cuComplex*>(l.H);
        MIMO_CUBLAS(cublasCgemmStridedBatched(m_blas,
                                              CUBLAS_OP_N,
                                              CUBLAS_OP_C,
                                              U,
                                              U,
                                              B,
                                              &one,
                                              H,
                                              U,
                                              (long long)(B)*U,
                                              H,
                                              U,
                                              (long long)(B)*U,
                                              &zero,
                                              reinterpret_cast<cuComplex*>(A),
                                              U,
                                              (long long)(U)*U,
                                              int(C)));
        MIMO_CUBLAS(cublasCgemmStridedBatched(m_blas,
                                              CUBLAS_OP_T,
                                              CUBLAS_OP_C,
                                              int(S),
                                              U,
                                              B,
                                              &one,
                                              reinterpret_cast<const cuComplex*>(l.y),
                                              B,
                                              (long long)(S)*B,
                                              H,
                                              U,
                                              (long long)(B)*U,
                                              &zero,
                                              reinterpret_cast<cuComplex*>(Z),
                                              int(S),
                                              (long long)(S)*U,
                                              int(C)));
        regularise_kernel<<<blocks_for(C * U * U, 256), 256, 0, stream>>>(
            A, C, U, l.n0, gdiag, adiag, I);
        MIMO_CUDA_CHECK(cudaGetLastError());
        const float2* Xt = Z;
        int* info = nullptr;
        if (!cg) {
            float2** ptrs = m_ptrs.reserve(3 * C);
            info = m_info.reserve(C);
            pointer_array_kernel<<<blocks_for(C, 256), 256, 0, stream>>>(
                A, size_t(U) * U, C, ptrs);
            pointer_array_kernel<<<blocks_for(C, 256), 256, 0, stream>>>(
                Z, S * U, C, ptrs + C);
            pointer_array_kernel<<<blocks_for(C, 256), 256, 0, stream>>>(
                I, size_t(U) * U, C, ptrs + 2 * C);
            MIMO_CUDA_CHECK(cudaGetLastError());
            auto** a = reinterpret_cast<cuComplex**>(ptrs);
            auto** z = reinterpret_cast<cuComplex**>(ptrs + C);
            auto** id = reinterpret_cast<cuComplex**>(ptrs + 2 * C);
            MIMO_CUSOLVER(cusolverDnCpotrfBatched(
                m_solver, CUBLAS_FILL_MODE_LOWER, U, a, U, info, int(C)));
            // X^T = Z L^-H L^-1, and L^-1 for the gains.
            MIMO_CUBLAS(cublasCtrsmBatched(m_blas,
                                           CUBLAS_SIDE_RIGHT,
                                           CUBLAS_FILL_MODE_LOWER,
                                           CUBLAS_OP_C,
                                           CUBLAS_DIAG_NON_UNIT,
                                           int(S),
                                           U,
                                           &one,
                                           a,
                                           U,
                                           z,
                                           int(S),
                                           int(C)));
            MIMO_CUBLAS(cublasCtrsmBatched(m_blas,
                                           CUBLAS_SIDE_RIGHT,
                                           CUBLAS_FILL_MODE_LOWER,
                                           CUBLAS_OP_N,
                                           CUBLAS_DIAG_NON_UNIT,
                                           int(S),
                                           U,
                                           &one,
                                           a,
                                           U,
                                           z,
                                           int(S),
                                           int(C)));
            MIMO_CUBLAS(cublasCtrsmBatched(m_blas,
                                           CUBLAS_SIDE_LEFT,
                                           CUBLAS_FILL_MODE_LOWER,
                                           CUBLAS_OP_N,
                                           CUBLAS_DIAG_NON_UNIT,
                                           U,
                                           U,
                                           &one,
                                           a,
                                           U,
                                           id,
                                           U,
                                           int(C)));
        } else {
            float2* X = m_X.reserve(P * U);
            float2* R = m_R.reserve(P * U);
            float2* T = m_T.reserve(P * U);
            float2* SM = m_SM.reserve(P * U);
            float* rr = m_rr.reserve(P);
            cg_step_kernel<<<blocks_for(P, 128), 128, 0, stream>>>(
                C, int(S), U, true, Z, SM, X, R, T, rr);
            MIMO_CUDA_CHECK(cudaGetLastError());
            for (int it = 0; it < m_config.iterations; ++it) {
                MIMO_CUBLAS(
                    cublasCgemmStridedBatched(m_blas,
                                              CUBLAS_OP_N,
                                              CUBLAS_OP_N,
                                              int(S),
                                              U,
                                              U,
                                              &one,
                                              reinterpret_cast<const cuComplex*>(T),
                                              int(S),
                                              (long long)(S)*U,
                                              reinterpret_cast<const cuComplex*>(A),
                                              U,
                                              (long long)(U)*U,
                                              &zero,
                                              reinterpret_cast<cuComplex*>(SM),
                                              int(S),
                                              (long long)(S)*U,
                                              int(C)));
                cg_step_kernel<<<blocks_for(P, 128), 128, 0, stream>>>(
                    C, int(S), U, false, Z, SM, X, R, T, rr);
                MIMO_CUDA_CHECK(cudaGetLastError());
            }
            Xt = X;
        }
        soft_output_kernel<<<blocks_for(P, 128), 128, 0, stream>>>(C,
                                                                   int(S),
                                                                   U,
                                                                   cg,
                                                                   l.n0,
                                                                   l.clip,
                                                                   m_pam,
                                                                   Z,
                                                                   Xt,
                                                                   I,
                                                                   A,
                                                                   gdiag,
                                                                   adiag,
                                                                   info,
                                                                   l.llr,
                                                                   l.z,
                                                                   l.sinr,
                                                                   sink);
        MIMO_CUDA_CHECK(cudaGetLastError());
    }

    cublasHandle_t m_blas = nullptr;
    cusolverDnHandle_t m_solver = nullptr;
    device_array<float2> m_A, m_I, m_Z, m_X, m_R, m_T, m_SM;
    device_array<float> m_gdiag, m_adiag, m_rr;
    device_array<float2*> m_ptrs;
    device_array<int> m_info;
};

} // namespace

std::unique_ptr<detector_engine> make_library_mmse_engine(const mmse_config& config)
{
    return std::make_unique<library_mmse_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
