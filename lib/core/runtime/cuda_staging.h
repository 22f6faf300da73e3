// Moving a batch between the caller's host memory and the device (DESIGN.md,
// "How a GPU block moves data"): through a reused pinned staging buffer when the
// caller's memory is pageable, directly when it is already pinned; and the
// per-batch status word the kernels report bad problems into.
#pragma once

#include "cuda_buffers.h"
#include "problem_status.h"

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

/// Host -> device for one input array.
template <typename T>
class upload_lane
{
public:
    /// Enqueues the copy on `stream`; returns the device copy. The host data may
    /// be reused once the call returns (pageable data is staged first).
    const T* upload(const T* host, size_t count, cudaStream_t stream)
    {
        T* dev = m_device.reserve(count);
        const T* src = host;
        if (!is_pinned_host_memory(host)) {
            T* staged = m_staging.reserve(count);
            std::memcpy(staged, host, count * sizeof(T));
            src = staged;
        }
        MIMO_CUDA_CHECK(cudaMemcpyAsync(dev, src, count * sizeof(T), cudaMemcpyHostToDevice, stream));
        return dev;
    }

private:
    device_buffer<T> m_device;
    pinned_buffer<T> m_staging;
};

/// Device -> host for one output array: device_output(), then download() on the
/// stream, then finish() after the stream has been synchronised.
template <typename T>
class download_lane
{
public:
    T* device_output(size_t count) { return m_device.reserve(count); }

    void download(T* host, size_t count, cudaStream_t stream)
    {
        m_staged = !is_pinned_host_memory(host);
        T* dst = m_staged ? m_staging.reserve(count) : host;
        MIMO_CUDA_CHECK(cudaMemcpyAsync(dst, m_device.data(), count * sizeof(T), cudaMemcpyDeviceToHost, stream));
    }

    void finish(T* host, size_t count)
    {
        if (m_staged)
            std::memcpy(host, m_staging.data(), count * sizeof(T));
    }

private:
    device_buffer<T> m_device;
    pinned_buffer<T> m_staging;
    bool m_staged = false;
};

/// The device word kernels atomicMin their bad-problem reports into.
class device_status
{
public:
    /// Clears the word on `stream`; returns its device address for the kernels.
    problem_status* reset(cudaStream_t stream)
    {
        m_device.reserve(1);
        m_host.reserve(1);
        MIMO_CUDA_CHECK(cudaMemsetAsync(m_device.data(), 0xff, sizeof(problem_status), stream));
        return m_device.data();
    }
    void fetch(cudaStream_t stream)
    {
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_host.data(), m_device.data(), sizeof(problem_status),
                                        cudaMemcpyDeviceToHost, stream));
    }
    /// Valid after the stream has been synchronised following fetch().
    problem_status value() const { return *m_host.data(); }

private:
    device_buffer<problem_status> m_device;
    pinned_buffer<problem_status> m_host;
};

} // namespace detail
} // namespace mimo_gpu
