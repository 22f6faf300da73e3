// The CUDA side the two MMSE implementations share (CUDA builds only): the
// host path (inputs copied to the device by DMA, outputs back) and the device
// path, with the fault bookkeeping of every engine. An implementation, the
// hand kernels (mmse_detector.cu) or the cuBLAS/cuSOLVER calls
// (mmse_library.cu), writes enqueue() alone.
#pragma once

#include "../../runtime/cuda_buffers.h"
#include "../../runtime/device_faults.h"
#include "../pam_table.h"
#include "mmse_engine.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

/// One call's device pointers and values: C channels, S symbols each.
struct mmse_launch {
    const float2* H;
    const float2* y;
    size_t channels;
    int S;
    float n0, clip;
    float* llr;  ///< may be null
    float2* z;   ///< may be null
    float* sinr; ///< may be null
};

class cuda_mmse_engine : public mmse_engine
{
public:
    explicit cuda_mmse_engine(const mmse_config& config);
    backend kind() const final { return backend::cuda; }
    detection_report run(const detector_input& in, float clip, const mmse_outputs& out) final;
    void run_device(const detector_input& in, float clip, float* d_llr, cuda_stream_t stream) final;
    detection_report device_status(cuda_stream_t stream) final { return m_faults.collect(stream); }
    size_t scratch_per_problem() const final;

protected:
    /// Enqueues one call on `stream`; bad problems are reported into `sink` and
    /// their outputs written as 0.
    virtual void enqueue(const mmse_launch& l, fault_sink sink, cudaStream_t stream) = 0;
    /// Device scratch bytes per channel of the implementation.
    virtual size_t scratch_per_channel() const { return 0; }

    const mmse_config m_config;
    const pam_table m_pam;

private:
    cuda_stream m_stream;
    device_buffer<cfloat> m_H, m_y, m_z;
    device_buffer<float> m_llr, m_sinr;
    device_faults m_host_faults; // the host path's
    device_faults m_faults;      // the device path's, collected by device_status
};

std::unique_ptr<mmse_engine> make_library_mmse_engine(const mmse_config& config); // mmse_library.cu

} // namespace detail
} // namespace mimo_gpu
