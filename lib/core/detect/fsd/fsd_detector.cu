// CUDA engine of the FSD and SFSD detectors: one kernel, a block holding a few
// problems and their lanes. Per problem, one thread orders the streams and
// runs the QR (fsd_item::prepare); the lanes share out the M^T paths of the
// full expansion (fsd_path), one thread picks the best path (FSD) or the Niter
// best (SFSD, fsd_select_best), the lanes share out the list extension
// (sfsd_extension), and per-stream symbol minima meet in shared memory (an
// atomicMin on the float's bits, valid for the non-negative distances). The
// same per-problem steps as the CPU engine (fsd_engine.h), so the two agree
// bit for bit.
#include "../../runtime/cuda_staging.h"
#include "../../runtime/device_faults.h"
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

template <int NR, int NT>
size_t fsd_shared_bytes(const fsd_launch& l, const pam_table& pam)
{
    const size_t item = sizeof(fsd_item<NR, NT>) / sizeof(float);
    const size_t per_problem = item + l.paths + size_t(NT) * pam.order() + l.picks +
                               size_t(NT) * pam.bits_per_symbol() + 1;
    return sizeof(float) * per_problem * l.block.problems;
}

template <int NR, int NT>
__global__ void __launch_bounds__(k_fsd_threads)
    fsd_kernel(const float* __restrict__ H, const float* __restrict__ y, size_t batch,
               const __grid_constant__ pam_table pam, const fsd_launch l, float n0, float clip,
               float* __restrict__ llr, fault_sink faults)
{
    using item_t = fsd_item<NR, NT>;
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

    if (mine && lane == 0) {
        const problem_fault fault =
            items[local].prepare(H + (first + local) * 2 * NR * NT, y + (first + local) * 2 * NR, l.full);
        if (fault != problem_fault::none)
            faults.report(first + local, fault);
        good[local] = fault == problem_fault::none;
    }
    for (int i = threadIdx.x; i < P * NT * M; i += blockDim.x)
        dmin[i] = __float_as_int(k_infinity);
    __syncthreads();

    int* my_dmin = dmin + local * NT * M;
    auto keep_min = [my_dmin](int i, float d) { atomicMin(my_dmin + i, __float_as_int(d)); };
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
    if (active && lane == 0) {
        fsd_select_best(dist + local * l.paths, l.paths, l.picks, chosen + local * l.picks);
        if (!l.soft) {
            fsd_path<NT>(items[local].E, l.full, chosen[local * l.picks], pam, level);
            fsd_hard_llrs<NT>(level, items[local].perm, pam, clip, hard + local * NT * Q);
        }
    }
    __syncthreads();
    if (active && l.soft) {
        const item_t& it = items[local];
        for (int e = lane; e < l.picks * l.per_base; e += l.block.lanes) {
            int base[2 * NT];
            fsd_path<NT>(it.E, l.full, chosen[local * l.picks + e / l.per_base], pam, base);
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
            v = l.soft ? llr_from_symbol_minima(reinterpret_cast<const float*>(dmin + lp * NT * M + (b / Q) * M),
                                                pam, b % Q, n0, clip, k_unreached_llr)
                       : hard[lp * per_problem + b];
        llr[(first + lp) * per_problem + b] = v;
    }
}

class cuda_fsd_engine final : public fsd_engine
{
public:
    explicit cuda_fsd_engine(const fsd_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
        m_launch.full = config.full;
        m_launch.paths = config.paths(m_pam);
        m_launch.soft = config.soft;
        m_launch.picks = config.soft ? (config.niter < m_launch.paths ? config.niter : m_launch.paths) : 1;
        m_launch.per_base = m_pam.bits_per_symbol() * (config.shape.nt - config.full);
        const int ext = config.soft ? m_launch.picks * m_launch.per_base : 0;
        m_launch.block = fsd_block_shape::of(m_launch.paths > ext ? m_launch.paths : ext);
    }
    backend kind() const override { return backend::cuda; }

    detection_report
    detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) override
    {
        const int nr = m_config.shape.nr, nt = m_config.shape.nt;
        const cudaStream_t s = m_stream.get();
        launch(m_H.device_view(H, batch * nr * nt), m_y.device_view(y, batch * nr), batch, n0, clip,
               m_llr.device_view(llr, batch * llrs_per_problem()), m_faults.sink(batch, s), s);
        const detection_report report = m_faults.collect(s, &m_flags);
        m_llr.finish();
        erase_problems(report, m_flags.data(), llr, llrs_per_problem(), 0.0f);
        return report;
    }

    void detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip, float* d_llr,
                       cuda_stream_t stream) override
    {
        if (batch == 0)
            return;
        launch(d_H, d_y, batch, n0, clip, d_llr, m_faults.sink(batch, stream), stream);
        m_faults.erase(d_llr, llrs_per_problem(), 0.0f, stream);
    }

    detection_report check_device_status(cuda_stream_t stream) override { return m_faults.collect(stream); }

private:
    size_t llrs_per_problem() const { return size_t(m_config.shape.nt) * m_pam.bits_per_symbol(); }

    void launch(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip, float* d_llr,
                fault_sink sink, cudaStream_t stream)
    {
        if (batch == 0)
            return;
        dispatch_fsd_shape(m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
            constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
            const size_t shared = fsd_shared_bytes<NR, NT>(m_launch, m_pam);
            if (shared > 48 * 1024)
                MIMO_CUDA_CHECK(cudaFuncSetAttribute(fsd_kernel<NR, NT>,
                                                     cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
            const unsigned blocks = unsigned((batch + m_launch.block.problems - 1) / m_launch.block.problems);
            fsd_kernel<NR, NT><<<blocks, k_fsd_threads, shared, stream>>>(
                reinterpret_cast<const float*>(d_H), reinterpret_cast<const float*>(d_y), batch, m_pam,
                m_launch, n0, clip, d_llr, sink);
        });
        MIMO_CUDA_CHECK_LAUNCH("fsd_kernel");
    }

    fsd_config m_config;
    pam_table m_pam;
    fsd_launch m_launch{};
    cuda_stream m_stream;
    host_input<cfloat> m_H, m_y;
    host_output<float> m_llr;
    device_faults m_faults;
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace

std::unique_ptr<fsd_engine> make_cuda_fsd_engine(const fsd_config& config)
{
    return std::make_unique<cuda_fsd_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
