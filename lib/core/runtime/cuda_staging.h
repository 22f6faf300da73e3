// Moving a batch between the caller's host memory and the device (DESIGN.md,
// "How a GPU block moves data"): through a reused pinned staging buffer when the
// caller's memory is pageable, directly when it is already pinned; and the
// per-batch status word the kernels report bad problems into.
#pragma once

#include "cuda_buffers.h"
#include "problem_status.h"

#include <algorithm>
#include <cstring>

namespace mimo_gpu {
namespace detail {

inline bool is_pinned_host_memory(const void* p)
{
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError(); // pageable memory on old drivers reports an error: not pinned
        return false;
    }
    return attr.type == cudaMemoryTypeHost;
}

/// Host -> device for one input array: begin() once per batch, then copy()
/// any slices (chunks) of it, each on its own stream.
template <typename T>
class upload_lane
{
public:
    /// Makes room for `count` elements and remembers where they come from.
    void begin(const T* host, size_t count)
    {
        m_host = host;
        m_device.reserve(count);
        m_pinned = is_pinned_host_memory(host);
        if (!m_pinned)
            m_staging.reserve(count);
    }
    /// Enqueues the copy of elements [offset, offset + count); pageable data is
    /// staged through pinned memory first (so the caller may reuse it at once).
    const T* copy(size_t offset, size_t count, cudaStream_t stream)
    {
        const T* src = m_host + offset;
        if (!m_pinned) {
            std::memcpy(m_staging.data() + offset, src, count * sizeof(T));
            src = m_staging.data() + offset;
        }
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_device.data() + offset, src, count * sizeof(T), cudaMemcpyHostToDevice,
                                        stream));
        return m_device.data() + offset;
    }
    /// Whole-array shorthand.
    const T* upload(const T* host, size_t count, cudaStream_t stream)
    {
        begin(host, count);
        return copy(0, count, stream);
    }

private:
    const T* m_host = nullptr;
    bool m_pinned = false;
    device_buffer<T> m_device;
    pinned_buffer<T> m_staging;
};

/// Device -> host for one output array: begin() gives the device array the
/// kernels write, copy() enqueues slices back, finish() (after the streams have
/// been synchronised) moves staged data into pageable host memory.
template <typename T>
class download_lane
{
public:
    T* begin(T* host, size_t count)
    {
        m_host = host;
        m_count = count;
        m_staged = !is_pinned_host_memory(host);
        if (m_staged)
            m_staging.reserve(count);
        return m_device.reserve(count);
    }
    void copy(size_t offset, size_t count, cudaStream_t stream)
    {
        T* dst = (m_staged ? m_staging.data() : m_host) + offset;
        MIMO_CUDA_CHECK(cudaMemcpyAsync(dst, m_device.data() + offset, count * sizeof(T), cudaMemcpyDeviceToHost,
                                        stream));
    }
    void finish()
    {
        if (m_staged)
            std::memcpy(m_host, m_staging.data(), m_count * sizeof(T));
    }

private:
    T* m_host = nullptr;
    size_t m_count = 0;
    bool m_staged = false;
    device_buffer<T> m_device;
    pinned_buffer<T> m_staging;
};

/// Two streams that a batch is spread over in chunks, so that one chunk's
/// host-to-device copy overlaps the previous chunk's kernels and device-to-host
/// copy (the copy engines run both directions at once). Measured on the H100:
/// see docs/benchmarks.md.
class two_stream_pipeline
{
public:
    two_stream_pipeline()
    {
        MIMO_CUDA_CHECK(cudaEventCreateWithFlags(&m_fork, cudaEventDisableTiming));
        MIMO_CUDA_CHECK(cudaEventCreateWithFlags(&m_join, cudaEventDisableTiming));
    }
    ~two_stream_pipeline()
    {
        cudaEventDestroy(m_fork);
        cudaEventDestroy(m_join);
    }
    two_stream_pipeline(const two_stream_pipeline&) = delete;
    two_stream_pipeline& operator=(const two_stream_pipeline&) = delete;

    cudaStream_t main_stream() const { return m_streams[0].get(); }

    /// Calls body(first, count, stream) for each chunk; afterwards everything is
    /// ordered before later work on main_stream().
    template <typename Body>
    void run(size_t batch, Body&& body)
    {
        const size_t chunks = batch >= 4 * k_min_chunk ? 4 : (batch >= 2 * k_min_chunk ? 2 : 1);
        const size_t per_chunk = (batch + chunks - 1) / chunks;
        MIMO_CUDA_CHECK(cudaEventRecord(m_fork, m_streams[0].get()));
        MIMO_CUDA_CHECK(cudaStreamWaitEvent(m_streams[1].get(), m_fork, 0));
        for (size_t c = 0, first = 0; first < batch; ++c, first += per_chunk)
            body(first, std::min(per_chunk, batch - first), m_streams[c % 2].get());
        MIMO_CUDA_CHECK(cudaEventRecord(m_join, m_streams[1].get()));
        MIMO_CUDA_CHECK(cudaStreamWaitEvent(m_streams[0].get(), m_join, 0));
    }

private:
    static constexpr size_t k_min_chunk = 1024; // below this a chunk's fixed costs outweigh the overlap
    cuda_stream m_streams[2];
    cudaEvent_t m_fork = nullptr, m_join = nullptr;
};

/// The device word kernels atomicMin their bad-problem reports into. It is
/// cleared when made and after every check, so the launches themselves need no
/// extra memset: a report covers everything enqueued since the last check.
class device_status
{
public:
    device_status()
    {
        m_device.reserve(1);
        m_host.reserve(1);
        MIMO_CUDA_CHECK(cudaMemset(m_device.data(), 0xff, sizeof(problem_status)));
    }
    problem_status* word() { return m_device.data(); }

    /// Fetches and clears the word on `stream`, waits for the stream, and throws
    /// std::invalid_argument naming the first bad problem if there was one.
    void check(const char* who, cudaStream_t stream)
    {
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_host.data(), m_device.data(), sizeof(problem_status),
                                        cudaMemcpyDeviceToHost, stream));
        MIMO_CUDA_CHECK(cudaMemsetAsync(m_device.data(), 0xff, sizeof(problem_status), stream));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(stream));
        throw_if_bad(who, *m_host.data());
    }

private:
    device_buffer<problem_status> m_device;
    pinned_buffer<problem_status> m_host;
};

} // namespace detail
} // namespace mimo_gpu
