// CUDA engine of the K-best detector: the FSD engine's ordering and QR kernel
// (V-BLAST order), then a warp per problem (kbest_warp_kernel) with its lists
// in shared memory.
#include "../engine/cuda_detector_engine.h"
#include "kbest_engine.h"

namespace mimo_gpu {
namespace detail {

namespace {

/// A warp per problem (kbest_warp_kernel): its words of shared memory.
struct kbest_warp_layout {
    int item, sorted, paths_words, table, costs, words;
    /// priors: room for the a-priori costs of every stream's symbols.
    static kbest_warp_layout
    of(int nt, int K, int M, size_t item_bytes, bool priors = false)
    {
        kbest_warp_layout l;
        l.item = int(item_bytes / 4);
        l.sorted = 1;
        while (l.sorted < K * M)
            l.sorted *= 2;
        l.paths_words = K * (2 * nt + 1);
        l.table = nt * M;
        l.costs = priors ? nt * M : 0;
        l.words = l.item + 2 * l.sorted + 2 * l.paths_words + 2 * l.table + l.costs;
        return l;
    }
};

constexpr int k_kbest_max_warps = 4;

/// K-best with a warp per problem, the same steps as kbest_search (the CPU's):
/// the lanes share out the children (kbest_child), a bitonic sort by
/// (distance, index) gives the K best in the order the CPU's heap gives them,
/// the lanes feed the pruned ones into the pruned minima and extend the kept
/// ones, and the final list's symbol minima give the LLRs (kbest_llr).
/// Priors: the a-priori costs in the path metric (priors is not null); the
/// kernel without them is compiled apart, so the plain search pays nothing.
template <int NT, bool Priors>
__global__ void __launch_bounds__(32 * k_kbest_max_warps)
    kbest_warp_kernel(const sphere_item<NT>* __restrict__ items,
                      size_t batch,
                      const __grid_constant__ pam_table pam,
                      int K,
                      kbest_warp_layout l,
                      float n0,
                      float clip,
                      float missing,
                      const float* __restrict__ priors,
                      float* __restrict__ llr,
                      fault_sink faults)
{
    constexpr int COLS = 2 * NT;
    extern __shared__ unsigned int smem_words[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t p = size_t(blockIdx.x) * (blockDim.x / 32) + warp;
    if (p >= batch ||
        faults.flagged(p)) // past the end, or flagged by the QR: the whole warp leaves
        return;
    const int M = pam.order(), L = pam.levels, Q = pam.bits_per_symbol();
    unsigned int* w = smem_words + size_t(warp) * l.words;
    const sphere_item<NT>* item = reinterpret_cast<const sphere_item<NT>*>(w);
    float* key = reinterpret_cast<float*>(w + l.item);
    int* idx = reinterpret_cast<int*>(key + l.sorted);
    int* lev = idx + l.sorted;
    float* ped = reinterpret_cast<float*>(lev + K * COLS);
    int* nlev = reinterpret_cast<int*>(ped + K);
    float* nped = reinterpret_cast<float*>(nlev + K * COLS);
    int* dmin = reinterpret_cast<int*>(nped + K);
    int* pmin = dmin + l.table;
    float* cost = reinterpret_cast<float*>(pmin + l.table); // l.costs words (priors)
    const float* prior = Priors ? priors + p * NT * Q : nullptr;
    if (prior && !priors_finite(prior, NT * Q)) { // the whole warp leaves: erased
        if (lane == 0)
            faults.report(p, problem_fault::non_finite);
        return;
    }

    const unsigned int* src = reinterpret_cast<const unsigned int*>(items + p);
    for (int i = lane; i < l.item; i += 32)
        w[i] = src[i];
    for (int i = lane; i < l.table; i += 32) {
        dmin[i] = __float_as_int(k_infinity);
        pmin[i] = __float_as_int(k_infinity);
    }
    if (lane == 0)
        ped[0] = 0.0f;
    if (prior)
        for (int i = lane; i < NT * M; i += 32)
            cost[i] = symbol_prior_cost(prior + (i / M) * Q, pam, i % M, n0);
    __syncwarp();
    const float* E = item->E;
    const int* perm = item->perm;
    int paths = 1;
    for (int pos = NT - 1; pos >= 0; --pos) {
        const int n = paths * M, ri = 2 * pos, rq = 2 * pos + 1;
        bool finite = true;
        for (int c = lane; c < l.sorted; c += 32) {
            float d = k_infinity;
            if (c < n) {
                float bq, bi;
                kbest_residuals<NT>(E, lev + (c / M) * COLS, 1, pos, pam, &bq, &bi);
                d = kbest_child<NT>(E, ped[c / M], bq, bi, pos, c % M, pam);
                if (Priors)
                    d += cost[perm[pos] * M + c % M];
                finite &= d < k_infinity;
            }
            key[c] = d;
            idx[c] = c;
        }
        if (__any_sync(0xffffffffu, !finite)) {
            if (lane == 0)
                faults.report(p, problem_fault::non_finite);
            return;
        }
        __syncwarp();
        for (int k = 2; k <= l.sorted; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = lane; i < l.sorted; i += 32) {
                    const int o = i ^ j;
                    if (o > i) {
                        const bool ascending = (i & k) == 0;
                        const bool out_of_order =
                            kbest_impl::before(key[o], idx[o], key[i], idx[i]);
                        if (out_of_order == ascending) {
                            const float tk = key[i];
                            key[i] = key[o];
                            key[o] = tk;
                            const int ti = idx[i];
                            idx[i] = idx[o];
                            idx[o] = ti;
                        }
                    }
                }
                __syncwarp();
            }
        const int keep = n < K ? n : K;
        for (int r = keep + lane; r < n; r += 32) { // pruned children
            const int c = idx[r], a = c / M;
            const int d = __float_as_int(key[r]);
            atomicMin(pmin + perm[pos] * M + c % M, d);
            for (int j = pos + 1; j < NT; ++j)
                atomicMin(pmin + perm[j] * M + lev[a * COLS + 2 * j] * L +
                              lev[a * COLS + 2 * j + 1],
                          d);
        }
        for (int r = lane; r < keep; r += 32) { // kept children: the next paths
            const int c = idx[r], a = c / M, sym = c % M;
            for (int j = 2 * pos + 2; j < COLS; ++j)
                nlev[r * COLS + j] = lev[a * COLS + j];
            nlev[r * COLS + ri] = sym / L;
            nlev[r * COLS + rq] = sym % L;
            nped[r] = key[r];
        }
        __syncwarp();
        for (int i = lane; i < keep * COLS; i += 32)
            lev[i] = nlev[i];
        for (int r = lane; r < keep; r += 32)
            ped[r] = nped[r];
        __syncwarp();
        paths = keep;
    }
    for (int r = lane; r < paths; r += 32) {
        const int d = __float_as_int(ped[r]);
        for (int j = 0; j < NT; ++j)
            atomicMin(dmin + perm[j] * M + lev[r * COLS + 2 * j] * L +
                          lev[r * COLS + 2 * j + 1],
                      d);
    }
    __syncwarp();
    const float best = ped[0];
    for (int b = lane; b < NT * Q; b += 32) {
        const float* d = reinterpret_cast<const float*>(dmin) + (b / Q) * M;
        const float* q = reinterpret_cast<const float*>(pmin) + (b / Q) * M;
        llr[p * NT * Q + b] =
            prior ? kbest_llr<true>(d, q, best, pam, b % Q, n0, clip, missing, prior[b])
                  : kbest_llr<false>(d, q, best, pam, b % Q, n0, clip, missing, 0.0f);
    }
}

class cuda_kbest_engine final : public cuda_detector_engine
{
public:
    explicit cuda_kbest_engine(const kbest_config& config)
        : cuda_detector_engine(
              config.shape,
              config.mod,
              { true, false }, // the ordering/QR kernel reads its input once, up front
              sphere_item_bytes(config.shape.nt)),
          m_config(config)
    {
        const kbest_warp_layout l = kbest_warp_layout::of(
            config.shape.nt, config.K, m_pam.order(), sphere_item_bytes(config.shape.nt));
        int device = 0;
        MIMO_CUDA_CHECK(cudaGetDevice(&device));
        MIMO_CUDA_CHECK(cudaDeviceGetAttribute(
            &m_shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        check_fits(l, "");
    }

protected:
    void launch(const detector_input& in,
                float clip,
                float* d_llr,
                fault_sink sink,
                cudaStream_t stream) override
    {
        const size_t batch = in.problems();
        const float n0 = in.n0;
        const kbest_warp_layout l =
            kbest_warp_layout::of(m_config.shape.nt,
                                  m_config.K,
                                  m_pam.order(),
                                  sphere_item_bytes(m_config.shape.nt),
                                  in.priors != nullptr);
        check_fits(l, " and the a-priori costs"); // before any launch: nothing to undo
        void* d_items = m_items.reserve(batch * sphere_item_bytes(m_config.shape.nt));
        launch_sphere_prepare(
            m_config.shape, 0, in.H, in.y, batch, d_items, sink, stream);
        const int by_memory = int((48 * 1024) / (size_t(l.words) * 4));
        const int warps =
            by_memory < 1
                ? 1
                : (by_memory < k_kbest_max_warps ? by_memory : k_kbest_max_warps);
        const size_t shared = size_t(warps) * l.words * 4;
        dispatch_nt(m_config.shape.nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            if constexpr (NT <= k_sphere_max_streams) {
                const auto run = [&](auto kernel) {
                    if (shared > 48 * 1024)
                        MIMO_CUDA_CHECK(cudaFuncSetAttribute(
                            kernel,
                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                            int(shared)));
                    kernel<<<unsigned((batch + warps - 1) / warps),
                             32 * warps,
                             shared,
                             stream>>>(static_cast<const sphere_item<NT>*>(d_items),
                                       batch,
                                       m_pam,
                                       m_config.K,
                                       l,
                                       n0,
                                       clip,
                                       m_config.missing_llr,
                                       in.priors,
                                       d_llr,
                                       sink);
                };
                if (in.priors)
                    run(kbest_warp_kernel<NT, true>);
                else
                    run(kbest_warp_kernel<NT, false>);
            }
        });
        MIMO_CUDA_CHECK_LAUNCH("kbest_warp_kernel");
    }

private:
    /// A warp's lists must fit the GPU's shared memory (K = 1024 with QPSK: 107 KB).
    void check_fits(const kbest_warp_layout& l, const std::string& with) const
    {
        if (size_t(l.words) * 4 > size_t(m_shared_limit))
            throw std::invalid_argument(
                "mimo_gpu: detector 'kbest': K = " + std::to_string(m_config.K) +
                " with " + std::to_string(m_pam.order()) + "-point symbols" + with +
                " needs " + std::to_string(size_t(l.words) * 4 / 1024) +
                " KB of shared memory per problem; this GPU allows " +
                std::to_string(m_shared_limit / 1024) + " KB: choose a smaller K");
    }

    kbest_config m_config;
    int m_shared_limit = 0;
    device_array<char> m_items; // the ordered QR of each problem
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_kbest_engine(const kbest_config& config)
{
    return std::make_unique<cuda_kbest_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
