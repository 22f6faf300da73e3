// Device memory owned by one object, for core code built without CUDA headers
// (device_memory.h's allocate_device / free_device); grown on demand, never
// shrunk. The .cu engines use cuda_buffers.h instead.
#pragma once

#include <mimo_gpu/device_memory.h>

#include <cstddef>

namespace mimo_gpu {
namespace detail {

class device_allocation
{
public:
    device_allocation() = default;
    explicit device_allocation(size_t bytes) { reserve(bytes); }
    ~device_allocation() { free_device(m_p); }
    device_allocation(const device_allocation&) = delete;
    device_allocation& operator=(const device_allocation&) = delete;

    /// At least `bytes`; what it held is lost when it grows.
    void* reserve(size_t bytes)
    {
        if (bytes > m_bytes) {
            free_device(m_p);
            m_p = nullptr;
            m_bytes = 0;
            m_p = allocate_device(bytes);
            m_bytes = bytes;
        }
        return m_p;
    }
    template <typename T>
    T* as() const
    {
        return static_cast<T*>(m_p);
    }

private:
    void* m_p = nullptr;
    size_t m_bytes = 0;
};

} // namespace detail
} // namespace mimo_gpu
