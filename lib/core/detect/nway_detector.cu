// CUDA engine of nway_detector. The search kernel gives each (problem, pass,
// candidate) a thread running the same ssfe_candidate as the CPU engine; the
// candidates of a problem meet in shared memory as per-symbol minima (an
// atomicMin on the float's bits, valid for the non-negative distances), and a
// second phase turns them into LLRs with one thread per bit.
#include "../qr/qr_kernels.h"
#include "../runtime/cuda_staging.h"
#include "../runtime/shape_dispatch.h"
#include "nway_engine.h"
#include "pam_table.h"
#include "ssfe_search.h"

#include <algorithm>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_search_threads = 256;

/// How a block's threads are shared out: `lanes` threads per problem, `problems` per block.
struct search_shape {
    int lanes, problems;
    __host__ __device__ static search_shape of(int slots)
    {
        const int lanes = slots < k_search_threads ? slots : k_search_threads;
        return {lanes, k_search_threads / lanes};
    }
};

template <int NT>
__global__ void ssfe_search_kernel(const float* __restrict__ items, size_t batch, int passes,
                                   const __grid_constant__ pam_table pam,
                                   float n0, float clip, float* __restrict__ llr, problem_status* status,
                                   size_t index_base)
{
    extern __shared__ float dmin[]; // [problems][NT][M]
    constexpr int per_order = 2 * NT * (2 * NT + 1);
    const int M = pam.order(), slots = passes * M;
    const search_shape sh = search_shape::of(slots);
    const int local = threadIdx.x / sh.lanes, lane = threadIdx.x % sh.lanes;
    const size_t first = size_t(blockIdx.x) * sh.problems;
    const float inf = __int_as_float(0x7f800000);

    for (int i = threadIdx.x; i < sh.problems * NT * M; i += blockDim.x)
        dmin[i] = inf;
    __syncthreads();

    const size_t p = first + local;
    if (local < sh.problems && p < batch) {
        const float* item = items + p * passes * per_order;
        int* mine = reinterpret_cast<int*>(dmin + local * NT * M);
        for (int s = lane; s < slots; s += sh.lanes) {
            const int o = s / M, c = s % M;
            int level[2 * NT];
            const float d = ssfe_candidate<NT>(item + o * per_order, c, pam, level);
            if (!(d < inf)) {
                atomicMin(status, make_status(index_base + p, problem_fault::non_finite));
                continue;
            }
            MIMO_UNROLL
            for (int j = 0; j < NT; ++j)
                atomicMin(mine + qr_layout::stream_at(j, o, NT) * M + symbol_index<NT>(level, j, pam),
                          __float_as_int(d));
        }
    }
    __syncthreads();

    const int Q = pam.bits_per_symbol(), per_problem = NT * Q;
    for (int i = threadIdx.x; i < sh.problems * per_problem; i += blockDim.x) {
        const int lp = i / per_problem, b = i % per_problem;
        if (first + lp >= batch)
            break;
        llr[(first + lp) * per_problem + b] =
            llr_from_symbol_minima(dmin + (lp * NT + b / Q) * M, pam, b % Q, n0, clip, k_unreached_llr);
    }
}

void launch_ssfe_search(const nway_config& cfg, const pam_table& pam, const float* d_items, size_t batch, float n0,
                        float clip, float* d_llr, problem_status* d_status, cudaStream_t stream,
                        size_t index_base = 0)
{
    if (batch == 0)
        return;
    const search_shape sh = search_shape::of(cfg.passes * pam.order());
    const unsigned blocks = unsigned((batch + sh.problems - 1) / sh.problems);
    const size_t shared = size_t(sh.problems) * cfg.shape.nt * pam.order() * sizeof(float);
    dispatch_nt(cfg.shape.nt, [&](auto nt_c) {
        constexpr int NT = decltype(nt_c)::value;
        ssfe_search_kernel<NT><<<blocks, k_search_threads, shared, stream>>>(d_items, batch, cfg.passes, pam, n0,
                                                                            clip, d_llr, d_status, index_base);
    });
    MIMO_CUDA_CHECK_LAUNCH("ssfe_search_kernel");
}

class cuda_nway_engine final : public nway_engine
{
public:
    explicit cuda_nway_engine(const nway_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cuda; }

    // Both host entry points pipeline their batch over two streams in chunks.
    void detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) override
    {
        m_items_in.begin(items, batch * item_floats());
        float* d_llr = m_llr.begin(llr, llr_count(batch));
        m_pipeline.run(batch, [&](size_t first, size_t n, cudaStream_t s) {
            const float* d_items = m_items_in.copy(first * item_floats(), n * item_floats(), s);
            launch_ssfe_search(m_config, m_pam, d_items, n, n0, clip, d_llr + llr_count(first), m_status.word(), s,
                               first);
            m_llr.copy(llr_count(first), llr_count(n), s);
        });
        finish();
    }

    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) override
    {
        const int nr = m_config.shape.nr, nt = m_config.shape.nt;
        m_H.begin(H, batch * nr * nt);
        m_y.begin(y, batch * nr);
        float* d_items = m_items.reserve(batch * item_floats());
        float* d_llr = m_llr.begin(llr, llr_count(batch));
        m_pipeline.run(batch, [&](size_t first, size_t n, cudaStream_t s) {
            const cfloat* dH = m_H.copy(first * nr * nt, n * nr * nt, s);
            const cfloat* dy = m_y.copy(first * nr, n * nr, s);
            float* chunk_items = d_items + first * item_floats();
            launch_mgs_qr(m_config.shape, m_config.passes, dH, dy, n, chunk_items, m_status.word(), s, first);
            launch_ssfe_search(m_config, m_pam, chunk_items, n, n0, clip, d_llr + llr_count(first), m_status.word(), s,
                               first);
            m_llr.copy(llr_count(first), llr_count(n), s);
        });
        finish();
    }

    void detect_qr_device(const float* d_items, size_t batch, float n0, float clip, float* d_llr,
                          cuda_stream_t stream) override
    {
        launch_ssfe_search(m_config, m_pam, d_items, batch, n0, clip, d_llr, m_status.word(), stream);
    }

    void check_device_status(cuda_stream_t stream) override
    {
        m_status.check("nway_detector", stream);
    }

private:
    size_t item_floats() const { return qr_layout{m_config.shape.nt, m_config.passes}.floats_per_item(); }
    size_t llr_count(size_t batch) const { return batch * m_config.shape.nt * m_pam.bits_per_symbol(); }

    /// Waits for the batch, reports bad problems, and hands the LLRs over.
    void finish()
    {
        m_status.check("nway_detector", m_pipeline.main_stream());
        m_llr.finish();
    }

    nway_config m_config;
    pam_table m_pam;
    two_stream_pipeline m_pipeline;
    upload_lane<float> m_items_in;
    upload_lane<cfloat> m_H, m_y;
    device_buffer<float> m_items; // QR items of detect(H, y): they never leave the device
    download_lane<float> m_llr;
    device_status m_status;
};

} // namespace

std::unique_ptr<nway_engine> make_cuda_nway_engine(const nway_config& config)
{
    return std::make_unique<cuda_nway_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
