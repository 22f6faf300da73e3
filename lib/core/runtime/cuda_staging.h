// How a batch in the caller's host memory reaches the kernels (pinned memory
// used in place, pageable memory staged through page-locked buffers; README,
// "CUDA"), and the per-batch status word the kernels report bad problems into.
#pragma once

#include "cuda_buffers.h"
#include "problem_status.h"

#include <algorithm>
#include <cstring>

namespace mimo_gpu {
namespace detail {

/// The device address of page-locked, mapped host memory at `p`, or nullptr
/// for pageable memory. Kernels read and write such memory in place over PCIe
/// ("zero copy"), which saves the separate copy operations of a batch.
/// The last few answers are kept: a GNU Radio block or a benchmark hands the
/// same buffers (H, y, LLR) over and over, and each query costs about a
/// microsecond.
inline void* mapped_device_pointer(const void* p)
{
    struct entry {
        const void* host;
        void* device;
    };
    thread_local entry recent[4] = {};
    thread_local unsigned next = 0;
    for (const entry& e : recent)
        if (e.host == p)
            return e.device;
    cudaPointerAttributes attr{};
    void* device = nullptr;
    if (cudaPointerGetAttributes(&attr, p) == cudaSuccess) {
        if (attr.type == cudaMemoryTypeHost && attr.devicePointer)
            device = static_cast<char*>(attr.devicePointer) +
                     (static_cast<const char*>(p) -
                      static_cast<const char*>(attr.hostPointer));
    } else {
        cudaGetLastError(); // pageable memory on old drivers reports an error
    }
    recent[next++ % 4] = { p, device };
    return device;
}

/// One input array of a batch, seen from the device: the caller's memory in
/// place when it is pinned, else a reused pinned staging copy.
template <typename T>
class host_input
{
public:
    const T* device_view(const T* host, size_t count)
    {
        if (void* mapped = mapped_device_pointer(host))
            return static_cast<const T*>(mapped);
        T* staged = m_staging.reserve(count);
        std::memcpy(staged, host, count * sizeof(T));
        return static_cast<const T*>(mapped_device_pointer(staged));
    }

private:
    pinned_buffer<T> m_staging;
};

/// One output array of a batch, seen from the device: the caller's memory in
/// place when it is pinned, else a pinned staging buffer that finish() (after
/// the stream has been synchronised) copies into the caller's memory.
template <typename T>
class host_output
{
public:
    T* device_view(T* host, size_t count)
    {
        m_host = host;
        m_count = count;
        if (void* mapped = mapped_device_pointer(host)) {
            m_staged = false;
            return static_cast<T*>(mapped);
        }
        m_staged = true;
        return static_cast<T*>(mapped_device_pointer(m_staging.reserve(count)));
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
    pinned_buffer<T> m_staging;
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
    void check(const char* who, cudaStream_t stream, const char* unit = "problem")
    {
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_host.data(),
                                        m_device.data(),
                                        sizeof(problem_status),
                                        cudaMemcpyDeviceToHost,
                                        stream));
        MIMO_CUDA_CHECK(
            cudaMemsetAsync(m_device.data(), 0xff, sizeof(problem_status), stream));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(stream));
        throw_if_bad(who, *m_host.data(), unit);
    }

private:
    device_array<problem_status> m_device;
    pinned_buffer<problem_status> m_host;
};

} // namespace detail
} // namespace mimo_gpu
