// CUDA engine of the K-best detector: the FSD engine's ordering and QR kernel
// (V-BLAST order), then a thread per problem running the CPU engine's
// kbest_problem, its scratch in device memory interleaved across the
// batch (element i of problem p at [i * batch + p]), so that a warp's threads,
// walking the same steps, touch consecutive words.
#include "../../runtime/cuda_staging.h"
#include "../../runtime/device_faults.h"
#include "kbest_engine.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_kbest_threads = 128;

template <int NT>
__global__ void __launch_bounds__(k_kbest_threads)
    kbest_kernel(const fsd_item<NT>* __restrict__ items, size_t batch, const __grid_constant__ pam_table pam,
                 int K, float n0, float clip, float* __restrict__ llr, float* scratch, fault_sink faults)
{
    const size_t p = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (p >= batch || faults.flags[p] != 0) // flagged by the QR: erased
        return;
    const int M = pam.order();
    const size_t B = batch;
    float* at = scratch;
    auto take = [&](size_t per_problem) {
        float* here = at;
        at += per_problem * B;
        return here;
    };
    kbest_scratch s{};
    s.stride = B;
    s.ped = take(K) + p;
    s.levels = reinterpret_cast<int*>(take(size_t(K) * 2 * NT)) + p;
    s.next_ped = take(K) + p;
    s.next_levels = reinterpret_cast<int*>(take(size_t(K) * 2 * NT)) + p;
    s.child = take(size_t(K) * M) + p;
    s.heap = reinterpret_cast<int*>(take(K)) + p;
    float* dmin = take(size_t(NT) * M) + p * NT * M;
    float* pmin = take(size_t(NT) * M) + p * NT * M;
    const problem_fault fault =
        kbest_problem<NT>(items[p], K, pam, n0, clip, s, dmin, pmin, llr + p * NT * pam.bits_per_symbol());
    if (fault != problem_fault::none)
        faults.report(p, fault);
}

class cuda_kbest_engine final : public kbest_engine
{
public:
    explicit cuda_kbest_engine(const kbest_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
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
        const size_t per_problem =
            size_t(kbest_scratch::floats_per_problem(m_config.K, m_pam.order(), m_config.shape.nt));
        float* scratch = m_scratch.reserve(per_problem * batch);
        void* d_items = m_items.reserve(batch * fsd_item_bytes(m_config.shape.nt));
        launch_fsd_prepare(m_config.shape, 0, d_H, d_y, batch, d_items, sink, stream);
        dispatch_nt(m_config.shape.nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            if constexpr (NT <= k_fsd_max_streams)
                kbest_kernel<NT><<<unsigned((batch + k_kbest_threads - 1) / k_kbest_threads), k_kbest_threads, 0,
                                   stream>>>(static_cast<const fsd_item<NT>*>(d_items), batch, m_pam, m_config.K,
                                             n0, clip, d_llr, scratch, sink);
        });
        MIMO_CUDA_CHECK_LAUNCH("kbest_kernel");
    }

    kbest_config m_config;
    pam_table m_pam;
    cuda_stream m_stream;
    host_input<cfloat> m_H, m_y;
    host_output<float> m_llr;
    device_buffer<float> m_scratch; // the search's lists, interleaved across the batch
    device_buffer<char> m_items;    // the ordered QR of each problem
    device_faults m_faults;
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace

std::unique_ptr<kbest_engine> make_cuda_kbest_engine(const kbest_config& config)
{
    return std::make_unique<cuda_kbest_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
