#include <mimo_gpu/backend.h>
#include <mimo_gpu/device_memory.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#ifdef MIMO_GPU_HAVE_CUDA
#include "cuda_check.h"
#include <cuda_runtime_api.h>
#endif

namespace mimo_gpu {

namespace {

[[noreturn]] void no_cuda(const char* what)
{
    throw std::runtime_error(std::string("mimo_gpu: ") + what + " needs CUDA: " +
                             (cuda_available() ? "" : cuda_unavailable_reason()));
}

} // namespace

#ifdef MIMO_GPU_HAVE_CUDA

void* allocate_pinned(size_t bytes)
{
    if (!cuda_available())
        no_cuda("page-locked memory");
    void* p = nullptr;
    MIMO_CUDA_CHECK(cudaHostAlloc(&p, std::max<size_t>(bytes, 1), cudaHostAllocPortable));
    return p;
}

void free_pinned(void* p) noexcept
{
    if (p)
        cudaFreeHost(p);
}

void* allocate_device(size_t bytes)
{
    if (!cuda_available())
        no_cuda("device memory");
    void* p = nullptr;
    MIMO_CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(bytes, 1)));
    return p;
}

void free_device(void* p) noexcept
{
    if (p)
        cudaFree(p);
}

void zero_device_memory(void* p, size_t bytes)
{
    if (bytes == 0)
        return;
    MIMO_CUDA_CHECK(cudaMemset(p, 0, bytes));
    // As copy_memory: the legacy stream only, not every stream of the device.
    MIMO_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void copy_memory(void* dst, const void* src, size_t bytes, copy_direction direction)
{
    if (bytes == 0)
        return;
    const cudaMemcpyKind kind =
        direction == copy_direction::host_to_device     ? cudaMemcpyHostToDevice
        : direction == copy_direction::device_to_host   ? cudaMemcpyDeviceToHost
        : direction == copy_direction::device_to_device ? cudaMemcpyDeviceToDevice
                                                        : cudaMemcpyDefault;
    MIMO_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    // cudaMemcpy may return before a device-to-device copy, or the DMA of a
    // pageable host-to-device copy, has finished, and the callers' kernels run on
    // non-blocking streams that do not wait for the legacy stream: wait here.
    MIMO_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void move_device_memory(void* dst, const void* src, size_t bytes, void* scratch)
{
    if (bytes == 0 || dst == src)
        return;
    // cudaMemcpy must not overlap: through a scratch copy (two copies, not one
    // per shift distance, which for a shift of a few items would be thousands).
    void* temporary = scratch ? nullptr : allocate_device(bytes);
    void* via = scratch ? scratch : temporary;
    try {
        copy_memory(via, src, bytes, copy_direction::device_to_device);
        copy_memory(dst, via, bytes, copy_direction::device_to_device);
    } catch (...) {
        free_device(temporary);
        throw;
    }
    free_device(temporary);
}

std::string lock_host_memory(void* p, size_t bytes) noexcept
{
    if (!cuda_available())
        return "no usable CUDA device";
    const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
    if (e == cudaSuccess)
        return "";
    cudaGetLastError(); // not sticky: clear it
    return std::string("cudaHostRegister: ") + cudaGetErrorString(e);
}

void unlock_host_memory(void* p) noexcept
{
    if (p && cudaHostUnregister(p) != cudaSuccess)
        cudaGetLastError();
}

memory_kind memory_kind_of(const void* p)
{
    if (!p || !cuda_available())
        return memory_kind::pageable;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError(); // pageable memory on older drivers reports an error
        return memory_kind::pageable;
    }
    if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged)
        return memory_kind::device;
    return attr.type == cudaMemoryTypeHost ? memory_kind::pinned : memory_kind::pageable;
}

device_stream::device_stream()
{
    if (!cuda_available())
        no_cuda("a device stream");
    cudaStream_t s = nullptr;
    MIMO_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    m_stream = reinterpret_cast<cuda_stream_t>(s);
}

device_stream::~device_stream()
{
    if (m_stream) {
        cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(m_stream));
        cudaStreamDestroy(reinterpret_cast<cudaStream_t>(m_stream));
    }
}

void device_stream::synchronize() const
{
    MIMO_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(m_stream)));
}

void device_stream::copy_async(void* dst, const void* src, size_t bytes) const
{
    if (bytes > 0)
        MIMO_CUDA_CHECK(cudaMemcpyAsync(dst,
                                        src,
                                        bytes,
                                        cudaMemcpyDefault,
                                        reinterpret_cast<cudaStream_t>(m_stream)));
}

void device_stream::copy(void* dst, const void* src, size_t bytes) const
{
    copy_async(dst, src, bytes);
    synchronize();
}

#else

void* allocate_pinned(size_t) { no_cuda("page-locked memory"); }
void free_pinned(void*) noexcept {}
void* allocate_device(size_t) { no_cuda("device memory"); }
void free_device(void*) noexcept {}
void zero_device_memory(void*, size_t) { no_cuda("device memory"); }
void copy_memory(void*, const void*, size_t, copy_direction) { no_cuda("a device copy"); }
void move_device_memory(void*, const void*, size_t, void*) { no_cuda("a device copy"); }
memory_kind memory_kind_of(const void*) { return memory_kind::pageable; }
std::string lock_host_memory(void*, size_t) noexcept { return "built without CUDA"; }
void unlock_host_memory(void*) noexcept {}
device_stream::device_stream() { no_cuda("a device stream"); }
device_stream::~device_stream() = default;
void device_stream::synchronize() const {}
void device_stream::copy(void*, const void*, size_t) const { no_cuda("a device copy"); }
void device_stream::copy_async(void*, const void*, size_t) const
{
    no_cuda("a device copy");
}

#endif

} // namespace mimo_gpu
