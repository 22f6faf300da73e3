// Device and pinned host buffers that grow on demand and are then reused, so
// no allocation happens in the steady-state hot path.
#pragma once

#include "cuda_check.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace mimo_gpu {
namespace detail {

enum class memory_kind { device, pinned_host };

/// Counts the growths of every cuda_buffer in the process: a recorded CUDA
/// graph that names a buffer its owner keeps (and so frees only to grow it)
/// stays valid while the count does (replayed_launches keys include it).
inline std::atomic<uint64_t>& allocation_epoch()
{
    static std::atomic<uint64_t> epoch{ 0 };
    return epoch;
}

template <typename T, memory_kind Kind>
class cuda_buffer
{
public:
    cuda_buffer() = default;
    cuda_buffer(const cuda_buffer&) = delete;
    cuda_buffer& operator=(const cuda_buffer&) = delete;
    cuda_buffer(cuda_buffer&& o) noexcept { swap(o); }
    cuda_buffer& operator=(cuda_buffer&& o) noexcept
    {
        swap(o);
        return *this;
    }
    ~cuda_buffer() { release(); }

    /// Makes room for `count` elements; keeps the allocation if it is big enough.
    /// Contents are not preserved across growth.
    T* reserve(size_t count)
    {
        if (count > m_capacity) {
            ++allocation_epoch();
            release();
            void* p = nullptr;
            if (Kind == memory_kind::device)
                MIMO_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
            else
                MIMO_CUDA_CHECK(cudaMallocHost(&p, count * sizeof(T)));
            m_data = static_cast<T*>(p);
            m_capacity = count;
        }
        return m_data;
    }
    T* data() const { return m_data; }
    size_t capacity() const { return m_capacity; }

private:
    void release() noexcept
    {
        if (m_data) {
            if (Kind == memory_kind::device)
                cudaFree(m_data);
            else
                cudaFreeHost(m_data);
        }
        m_data = nullptr;
        m_capacity = 0;
    }
    void swap(cuda_buffer& o) noexcept
    {
        std::swap(m_data, o.m_data);
        std::swap(m_capacity, o.m_capacity);
    }
    T* m_data = nullptr;
    size_t m_capacity = 0;
};

template <typename T>
using device_array = cuda_buffer<T, memory_kind::device>;
template <typename T>
using pinned_buffer = cuda_buffer<T, memory_kind::pinned_host>;

/// An owned, non-blocking CUDA stream.
class cuda_stream
{
public:
    cuda_stream()
    {
        MIMO_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    }
    /// With a scheduling priority (cudaDeviceGetStreamPriorityRange: lower
    /// numbers first).
    explicit cuda_stream(int priority)
    {
        MIMO_CUDA_CHECK(
            cudaStreamCreateWithPriority(&m_stream, cudaStreamNonBlocking, priority));
    }
    ~cuda_stream()
    {
        if (m_stream)
            cudaStreamDestroy(m_stream);
    }
    cuda_stream(const cuda_stream&) = delete;
    cuda_stream& operator=(const cuda_stream&) = delete;
    cudaStream_t get() const { return m_stream; }
    void synchronize() const { MIMO_CUDA_CHECK(cudaStreamSynchronize(m_stream)); }

private:
    cudaStream_t m_stream = nullptr;
};

/// An event without timing, marking how far a stream's work has got.
class cuda_event
{
public:
    cuda_event()
    {
        MIMO_CUDA_CHECK(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming));
    }
    ~cuda_event()
    {
        if (m_event)
            cudaEventDestroy(m_event);
    }
    cuda_event(const cuda_event&) = delete;
    cuda_event& operator=(const cuda_event&) = delete;
    cudaEvent_t get() const { return m_event; }

private:
    cudaEvent_t m_event = nullptr;
};

} // namespace detail
} // namespace mimo_gpu
