// CUDA engine of the FSD and SFSD detectors. A first kernel orders the streams
// and runs the QR, a thread per problem (sphere_item::prepare, also used by
// K-best); the search kernel, compiled per nt only, holds a few problems per
// block and their lanes: the lanes share out the M^T paths of the
// full expansion (fsd_path), rank them by (distance, index) in parallel to find
// the best path (FSD) or the Niter best (SFSD; the order fsd_select_best gives
// on the CPU), share out the list extension
// (sfsd_extension), and per-stream symbol minima meet in shared memory (an
// atomicMin on the float's bits, valid for the non-negative distances). The
// same per-problem steps as the CPU engine (fsd_engine.h), so the two agree
// bit for bit.
#include "../engine/cuda_detector_engine.h"
#include "fsd_engine.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_fsd_threads = 256;

/// Lanes per problem (threads sharing its paths and extensions) and problems per block.
struct fsd_block_shape {
    int lanes, problems;
    static fsd_block_shape of(int work)
    {
        const int lanes = work < k_fsd_threads ? (work > 0 ? work : 1) : k_fsd_threads;
        return { lanes, k_fsd_threads / lanes };
    }
};

struct fsd_launch {
    int full, paths, picks, per_base; // picks: 1 (FSD) or Niter (SFSD)
    bool soft;
    fsd_block_shape block;
};

template <int NT>
size_t fsd_shared_bytes(const fsd_launch& l, const pam_table& pam)
{
    const size_t item = sizeof(sphere_item<NT>) / sizeof(float);
    const size_t per_problem = item + l.paths + size_t(NT) * pam.order() + l.picks +
                               size_t(NT) * pam.bits_per_symbol() + 1;
    return sizeof(float) * per_problem * l.block.problems;
}

template <int NT>
__global__ void __launch_bounds__(k_fsd_threads)
    fsd_kernel(const sphere_item<NT>* __restrict__ in,
               size_t batch,
               const __grid_constant__ pam_table pam,
               const fsd_launch l,
               float n0,
               float clip,
               float* __restrict__ llr,
               fault_sink faults)
{
    using item_t = sphere_item<NT>;
    constexpr int item_floats = sizeof(item_t) / sizeof(float);
    const int M = pam.order(), Q = pam.bits_per_symbol(), P = l.block.problems;
    extern __shared__ float smem[];
    item_t* items = reinterpret_cast<item_t*>(smem);
    float* dist = smem + P * item_floats;
    int* dmin = reinterpret_cast<int*>(dist + P * l.paths);
    int* chosen = dmin + P * NT * M;
    float* hard = reinterpret_cast<float*>(chosen + P * l.picks);
    int* good = reinterpret_cast<int*>(hard + P * NT * Q);

    const size_t first = size_t(blockIdx.x) * P;
    const int n = int(first + P <= batch ? P : batch - first);
    const int local = threadIdx.x / l.block.lanes, lane = threadIdx.x % l.block.lanes;
    const bool mine = local < n && local < P;

    // The block's items, coalesced; a problem the QR flagged is left alone.
    const unsigned int* src = reinterpret_cast<const unsigned int*>(in + first);
    unsigned int* dst = reinterpret_cast<unsigned int*>(smem);
    for (int i = threadIdx.x; i < n * item_floats; i += blockDim.x)
        dst[i] = src[i]; // as words: the items hold ints too
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        good[i] = !faults.flagged(first + i);
    for (int i = threadIdx.x; i < P * NT * M; i += blockDim.x)
        dmin[i] = __float_as_int(k_infinity);
    for (int i = threadIdx.x; i < P * l.picks; i += blockDim.x)
        chosen[i] = 0; // valid indices even where non-finite distances leave ranks out
    __syncthreads();

    int* my_dmin = dmin + local * NT * M;
    auto keep_min = [my_dmin](int i, float d) {
        atomicMin(my_dmin + i, __float_as_int(d));
    };
    const bool active = mine && good[local];
    int level[2 * NT];
    if (active) {
        const item_t& it = items[local];
        for (int p = lane; p < l.paths; p += l.block.lanes) {
            const float d = fsd_path<NT>(it.E, l.full, p, pam, level);
            dist[local * l.paths + p] = d;
            if (!(d < k_infinity))
                faults.report(first + local, problem_fault::non_finite);
            else if (l.soft)
                fsd_record<NT>(level, it.perm, d, pam, keep_min);
        }
    }
    __syncthreads();
    // The best `picks` paths by (distance, index), as fsd_select_best picks
    // them: each lane ranks its paths against all the others.
    if (active)
        for (int p = lane; p < l.paths; p += l.block.lanes) {
            const float* d = dist + local * l.paths;
            int rank = 0;
            for (int q = 0; q < l.paths; ++q)
                rank += d[q] < d[p] || (d[q] == d[p] && q < p);
            if (rank < l.picks)
                chosen[local * l.picks + rank] = p;
        }
    __syncthreads();
    if (active && lane == 0 && !l.soft) {
        fsd_path<NT>(items[local].E, l.full, chosen[local * l.picks], pam, level);
        fsd_hard_llrs<NT>(level, items[local].perm, pam, clip, hard + local * NT * Q);
    }
    __syncthreads();
    if (active && l.soft) {
        const item_t& it = items[local];
        for (int e = lane; e < l.picks * l.per_base; e += l.block.lanes) {
            int base[2 * NT];
            fsd_path<NT>(
                it.E, l.full, chosen[local * l.picks + e / l.per_base], pam, base);
            const int r = e % l.per_base;
            const float d = sfsd_extension<NT>(it.E, base, r / Q, r % Q, pam, level);
            if (!(d < k_infinity))
                faults.report(first + local, problem_fault::non_finite);
            else
                fsd_record<NT>(level, it.perm, d, pam, keep_min);
        }
    }
    __syncthreads();
    const int per_problem = NT * Q;
    for (int i = threadIdx.x; i < n * per_problem; i += blockDim.x) {
        const int lp = i / per_problem, b = i % per_problem;
        float v = 0.0f;
        if (good[lp])
            v = l.soft ? llr_from_symbol_minima(reinterpret_cast<const float*>(
                                                    dmin + lp * NT * M + (b / Q) * M),
                                                pam,
                                                b % Q,
                                                n0,
                                                clip,
                                                k_unreached_llr)
                       : hard[lp * per_problem + b];
        llr[(first + lp) * per_problem + b] = v;
    }
}

class cuda_fsd_engine final : public cuda_detector_engine
{
public:
    explicit cuda_fsd_engine(const fsd_config& config)
        : cuda_detector_engine(
              config.shape,
              config.mod,
              { true, false }, // the ordering/QR kernel reads its input once, up front
              sphere_item_bytes(config.shape.nt)),
          m_config(config)
    {
        m_launch.full = config.full;
        m_launch.paths = config.paths(m_pam);
        m_launch.soft = config.soft;
        m_launch.picks =
            config.soft ? (config.niter < m_launch.paths ? config.niter : m_launch.paths)
                        : 1;
        m_launch.per_base = m_pam.bits_per_symbol() * (config.shape.nt - config.full);
        const int ext = config.soft ? m_launch.picks * m_launch.per_base : 0;
        m_launch.block = fsd_block_shape::of(m_launch.paths > ext ? m_launch.paths : ext);
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
        void* d_items = m_items.reserve(batch * sphere_item_bytes(m_config.shape.nt));
        launch_sphere_prepare(
            m_config.shape, m_config.full, in.H, in.y, batch, d_items, sink, stream);
        dispatch_nt(m_config.shape.nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            if constexpr (NT <= k_sphere_max_streams) {
                const size_t shared = fsd_shared_bytes<NT>(m_launch, m_pam);
                if (shared > 48 * 1024)
                    MIMO_CUDA_CHECK(
                        cudaFuncSetAttribute(fsd_kernel<NT>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(shared)));
                const unsigned blocks = unsigned((batch + m_launch.block.problems - 1) /
                                                 m_launch.block.problems);
                fsd_kernel<NT><<<blocks, k_fsd_threads, shared, stream>>>(
                    static_cast<const sphere_item<NT>*>(d_items),
                    batch,
                    m_pam,
                    m_launch,
                    n0,
                    clip,
                    d_llr,
                    sink);
            }
        });
        MIMO_CUDA_CHECK_LAUNCH("fsd_kernel");
    }

private:
    fsd_config m_config;
    fsd_launch m_launch{};
    device_array<char> m_items; // the ordered QR of each problem, between the two kernels
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_fsd_engine(const fsd_config& config)
{
    return std::make_unique<cuda_fsd_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
