// CUDA engine of ml_detector: one block per problem, its threads sharing out the
// M^(nt-1) slices of the exhaustive search (ml_scan_slice, as on the CPU) and
// meeting in shared memory as per-symbol minima.
#include "../../qr/mgs_qr.h"
#include "../engine/cuda_detector_engine.h"
#include "../pam_table.h"
#include "ml_engine.h"
#include "ml_search.h"

#include <algorithm>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_ml_threads = 256;

__global__ void ml_search_kernel(const float* __restrict__ H,
                                 const float* __restrict__ y,
                                 int nr,
                                 int nt,
                                 const __grid_constant__ pam_table pam,
                                 uint64_t slices,
                                 float n0,
                                 const float* __restrict__ priors,
                                 size_t first,
                                 float* __restrict__ llr,
                                 fault_sink faults)
{
    extern __shared__ float smem[]; // dmin [nt][M], H, y, prior costs [nt][M]
    const int M = pam.order(), Q = pam.bits_per_symbol();
    const size_t p = first + blockIdx.x;
    const float inf = k_infinity;
    float* dmin = smem;
    float* sH = dmin + nt * M;
    float* sy = sH + 2 * nr * nt;
    float* cost = sy + 2 * nr;
    const float* prior = priors ? priors + p * nt * Q : nullptr;
    for (int i = threadIdx.x; i < nt * M; i += blockDim.x)
        dmin[i] = inf;
    // Every slice reads the whole problem: keep it on chip (the input may be host
    // memory).
    for (int i = threadIdx.x; i < 2 * nr * nt; i += blockDim.x)
        sH[i] = H[p * 2 * nr * nt + i];
    for (int i = threadIdx.x; i < 2 * nr; i += blockDim.x)
        sy[i] = y[p * 2 * nr + i];
    __shared__ problem_fault fault;
    __shared__ float scale;
    __syncthreads();
    if (threadIdx.x == 0) {
        fault = channel_fault(sH, sy, nr, nt);
        if (fault == problem_fault::none && prior && !priors_finite(prior, nt * Q))
            fault = problem_fault::non_finite;
        if (fault != problem_fault::none)
            faults.report(p, fault);
        else
            scale = ml_normalise(sH, sy, nr, nt);
    }
    __syncthreads();
    if (fault != problem_fault::none) // the whole block leaves: erased
        return;
    if (prior) {
        for (int i = threadIdx.x; i < nt * M; i += blockDim.x)
            cost[i] =
                symbol_prior_cost(prior + (i / M) * Q, pam, i % M, n0 * scale * scale);
        __syncthreads();
    }

    int* mins = reinterpret_cast<int*>(dmin);
    auto keep_min = [&](int t, int s, float d) {
        if (d < inf)
            atomicMin(mins + t * M + s, __float_as_int(d));
    };
    bool finite = true;
    for (uint64_t s = threadIdx.x; s < slices; s += blockDim.x)
        finite &= ml_scan_slice(sH, sy, nr, nt, pam, s, prior ? cost : nullptr, keep_min);
    if (!finite)
        faults.report(p, problem_fault::non_finite);
    __syncthreads();

    for (int i = threadIdx.x; i < nt * Q; i += blockDim.x) {
        const float app = llr_from_symbol_minima(
            dmin + (i / Q) * M, pam, i % Q, n0 * scale * scale, 0.0f, 0.0f);
        llr[p * nt * Q + i] = prior ? app - prior[i] : app; // extrinsic with priors
    }
}

class cuda_ml_engine final : public cuda_detector_engine
{
public:
    explicit cuda_ml_engine(const ml_config& config)
        : cuda_detector_engine(config.shape, config.mod), m_shape(config.shape)
    {
    }

private:
    void launch(const detector_input& in,
                float,
                float* d_llr,
                fault_sink sink,
                cudaStream_t s) override
    {
        const int nr = m_shape.nr, nt = m_shape.nt, M = m_pam.order();
        uint64_t slices = 1;
        for (int t = 0; t < nt - 1; ++t)
            slices *= uint64_t(M);
        const size_t batch = in.problems();
        const auto* dH = reinterpret_cast<const float*>(in.H);
        const auto* dy = reinterpret_cast<const float*>(in.y);
        // One launch per chunk keeps each grid within limits for any batch.
        constexpr size_t chunk = 1u << 20;
        const size_t shared =
            sizeof(float) * (size_t(nt) * M * (in.priors ? 2 : 1) + 2 * nr * nt + 2 * nr);
        for (size_t first = 0; first < batch; first += chunk) {
            const size_t n = std::min(chunk, batch - first);
            ml_search_kernel<<<unsigned(n), k_ml_threads, shared, s>>>(
                dH, dy, nr, nt, m_pam, slices, in.n0, in.priors, first, d_llr, sink);
            MIMO_CUDA_CHECK_LAUNCH("ml_search_kernel");
        }
    }

    mimo_shape m_shape;
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_ml_engine(const ml_config& config)
{
    return std::make_unique<cuda_ml_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
