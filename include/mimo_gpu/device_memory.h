// Page-locked host memory, device memory and copies between them, for code
// that must not include CUDA headers (the GNU Radio device buffers in
// lib/blocks). Every call is checked; without CUDA (not built, or no usable
// device) each throws std::runtime_error naming the reason.
#pragma once

#include <mimo_gpu/types.h>

#include <cstddef>
#include <string>

namespace mimo_gpu {

/// Page-locked host memory (DMA at full PCIe speed), at least `bytes`.
void* allocate_pinned(size_t bytes);
void free_pinned(void* p) noexcept;
/// Device memory of the current CUDA device.
void* allocate_device(size_t bytes);
void free_device(void* p) noexcept;
/// Sets `bytes` of device memory to zero; returns when done.
void zero_device_memory(void* p, size_t bytes);

/// any: wherever the pointers lie (unified addressing), e.g. page-locked to device.
enum class copy_direction { host_to_device, device_to_host, device_to_device, any };
/// Copies and returns when the copy is done.
void copy_memory(void* dst, const void* src, size_t bytes, copy_direction direction);
/// memmove within device memory: the ranges may overlap (copied through
/// `scratch`, device memory of at least `bytes`, or a temporary one when null);
/// returns when done.
void move_device_memory(void* dst,
                        const void* src,
                        size_t bytes,
                        void* scratch = nullptr);

/// Page-locks `bytes` of ordinary host memory in place (cudaHostRegister), so
/// that transfers from it run at full PCIe speed with no staging copy (e.g. a
/// GNU Radio stream buffer a GPU block reads). Returns the reason it could not
/// ("" on success; nothing is locked then); without CUDA, always a reason.
std::string lock_host_memory(void* p, size_t bytes) noexcept;
/// Undoes lock_host_memory (before the memory is freed).
void unlock_host_memory(void* p) noexcept;

/// Where a pointer points: device memory, page-locked host memory (which
/// kernels reach too, by unified addressing), or ordinary (pageable) host memory,
/// which kernels cannot read. Without CUDA every pointer is pageable.
enum class memory_kind { device, pinned, pageable };
memory_kind memory_kind_of(const void* p);

/// A non-blocking CUDA stream owned by its creator, for code without CUDA headers.
class device_stream
{
public:
    device_stream();
    ~device_stream();
    device_stream(const device_stream&) = delete;
    device_stream& operator=(const device_stream&) = delete;
    cuda_stream_t get() const { return m_stream; }
    void synchronize() const;
    /// Copies between any two of device, page-locked and pageable memory on
    /// this stream (after its queued work) and waits for it: unlike
    /// copy_memory, it does not wait for the legacy stream, nor make it wait.
    void copy(void* dst, const void* src, size_t bytes) const;
    /// The same copy, queued on this stream without waiting (pageable host
    /// memory makes it synchronous, as CUDA does).
    void copy_async(void* dst, const void* src, size_t bytes) const;

private:
    cuda_stream_t m_stream = nullptr;
};

} // namespace mimo_gpu
