#include "cuda_check.h"
#include "device_faults.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

__global__ void erase_flagged_kernel(fault_sink sink,
                                     size_t batch,
                                     size_t per_problem,
                                     float fill,
                                     float* __restrict__ out)
{
    if (sink.summary->count == 0) // the usual case: nothing to do
        return;
    for (size_t p = blockIdx.x * size_t(blockDim.x) + threadIdx.x; p < batch;
         p += size_t(gridDim.x) * blockDim.x)
        if (sink.flagged(p))
            for (size_t i = 0; i < per_problem; ++i)
                out[p * per_problem + i] = fill;
}

} // namespace

device_faults::device_faults()
{
    m_summary.reserve(1);
    m_host.reserve(1);
    MIMO_CUDA_CHECK(cudaMemset(m_summary.data(), 0, sizeof(fault_summary)));
}

fault_sink device_faults::sink(size_t batch, cudaStream_t stream)
{
    // A generation per collection cycle: a word of an older cycle reads as clean,
    // so the flags need no memset between cycles (only when the count would wrap).
    if (m_pending == 0) {
        if (m_generation + 1 >= (fault_word(1) << (32 - k_fault_bits))) {
            MIMO_CUDA_CHECK(cudaMemsetAsync(
                m_flags.data(), 0, m_flags.capacity() * sizeof(fault_word), stream));
            m_generation = 0;
        }
        ++m_generation;
    }
    // Each batch of the cycle has its own words, after the earlier batches', so a
    // report of several calls can list every erased problem (collect()).
    const size_t need = m_pending + std::max<size_t>(batch, 1);
    if (need > m_flags.capacity()) {
        device_array<fault_word> grown;
        const size_t capacity = std::max(need, 2 * m_flags.capacity());
        grown.reserve(capacity);
        if (m_pending >
            0) // the cycle's earlier words; the old buffer is freed after the copy
            MIMO_CUDA_CHECK(cudaMemcpyAsync(grown.data(),
                                            m_flags.data(),
                                            m_pending * sizeof(fault_word),
                                            cudaMemcpyDeviceToDevice,
                                            stream));
        MIMO_CUDA_CHECK(cudaMemsetAsync(grown.data() + m_pending,
                                        0,
                                        (capacity - m_pending) * sizeof(fault_word),
                                        stream));
        m_flags = std::move(grown);
    }
    m_last_flags = m_flags.data() + m_pending;
    const fault_sink s{ m_last_flags, m_summary.data(), m_pending, m_generation };
    m_pending += batch;
    m_last_batch = batch;
    return s;
}

void device_faults::abandon(cudaStream_t stream)
{
    cudaMemsetAsync(m_summary.data(), 0, sizeof(fault_summary), stream);
    cudaStreamSynchronize(stream);
    cudaGetLastError(); // the call already failed: its error has been thrown
    m_pending = 0;
    m_last_batch = 0;
}

void device_faults::forget_last_batch()
{
    m_pending -= std::min(m_pending, m_last_batch);
    m_last_batch = 0;
}

void device_faults::erase(float* d_out,
                          size_t per_problem,
                          float fill,
                          cudaStream_t stream)
{
    if (m_last_batch == 0)
        return;
    const size_t blocks = std::min<size_t>((m_last_batch + 255) / 256, 1024);
    const fault_sink s{ m_last_flags, m_summary.data(), 0, m_generation };
    erase_flagged_kernel<<<unsigned(blocks), 256, 0, stream>>>(
        s, m_last_batch, per_problem, fill, d_out);
    MIMO_CUDA_CHECK_LAUNCH("erase_flagged_kernel");
}

detection_report device_faults::collect(cudaStream_t stream,
                                        std::vector<fault_word>* flags_out)
{
    MIMO_CUDA_CHECK(cudaMemcpyAsync(m_host.data(),
                                    m_summary.data(),
                                    sizeof(fault_summary),
                                    cudaMemcpyDeviceToHost,
                                    stream));
    MIMO_CUDA_CHECK(cudaMemsetAsync(m_summary.data(), 0, sizeof(fault_summary), stream));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(stream));
    const fault_summary& s = *m_host.data();
    detection_report r;
    r.problems = m_pending;
    r.erased = size_t(s.count);
    if (r.erased > k_listed_erasures) {
        // More than the summary holds: every one from the flags of the cycle's batches.
        std::vector<fault_word> flags(m_pending);
        MIMO_CUDA_CHECK(cudaMemcpy(flags.data(),
                                   m_flags.data(),
                                   flags.size() * sizeof(fault_word),
                                   cudaMemcpyDeviceToHost));
        for (fault_word& w :
             flags) // this cycle's words to plain fault bits, older ones clean
            w = (w >> k_fault_bits) == m_generation ? (w & ((1u << k_fault_bits) - 1))
                                                    : 0u;
        r = report_from_flags(flags.data(), flags.size());
        if (flags_out)
            *flags_out = std::move(flags);
    } else {
        const size_t n = std::min<size_t>(r.erased, k_listed_erasures);
        for (size_t i = 0; i < n; ++i)
            r.first_erased.push_back({ size_t(s.listed[i] >> 8),
                                       static_cast<problem_fault>(s.listed[i] & 0xff) ==
                                               problem_fault::singular
                                           ? erasure_cause::singular_channel
                                           : erasure_cause::non_finite_input });
        std::sort(r.first_erased.begin(),
                  r.first_erased.end(),
                  [](const erased_problem& a, const erased_problem& b) {
                      return a.index < b.index;
                  });
    }
    m_pending = 0;
    return r;
}

} // namespace detail
} // namespace mimo_gpu
