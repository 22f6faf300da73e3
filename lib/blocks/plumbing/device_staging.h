/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_DEVICE_STAGING_H
#define INCLUDED_MIMO_GPU_DEVICE_STAGING_H

#include <mimo_gpu/device_memory.h>

#include <cstddef>

namespace gr {
namespace mimo_gpu {

/// An input of a GPU block in device-buffer mode, as the kernels can read it:
/// device or page-locked memory in place, ordinary (pageable) host memory
/// copied into device memory kept for the next call (grown, never shrunk).
template <typename T>
class device_staging
{
public:
    device_staging() = default;
    device_staging(const device_staging&) = delete;
    device_staging& operator=(const device_staging&) = delete;
    ~device_staging() { ::mimo_gpu::free_device(m_device); }

    const T* device_view(const T* p, size_t count)
    {
        if (::mimo_gpu::memory_kind_of(p) != ::mimo_gpu::memory_kind::pageable)
            return p;
        if (count > m_capacity) {
            ::mimo_gpu::free_device(m_device);
            m_device = nullptr;
            m_device = static_cast<T*>(::mimo_gpu::allocate_device(count * sizeof(T)));
            m_capacity = count;
        }
        ::mimo_gpu::copy_memory(
            m_device, p, count * sizeof(T), ::mimo_gpu::copy_direction::host_to_device);
        return m_device;
    }

private:
    T* m_device = nullptr;
    size_t m_capacity = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
