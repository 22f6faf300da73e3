// The CUDA side every detector_engine shares (CUDA builds only): the host
// path (the caller's memory seen from the device, in place when pinned; the
// report collected; the bad problems' LLRs zeroed) and the device path
// (asynchronous, bad problems erased on the device, reported by the next
// check). A family's CUDA engine implements launch() alone.
#pragma once

#include "../runtime/cuda_staging.h"
#include "../runtime/device_faults.h"
#include "detector_engine.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

class cuda_detector_engine : public detector_engine
{
public:
    /// llrs: LLRs per problem. copy_inputs: the host path copies H and y to
    /// the device first (DMA at full PCIe speed) instead of letting the kernels
    /// read them in place: for kernels that read their input once, in a short
    /// first phase, where in-place reads over PCIe would not overlap with work.
    /// item_bytes: the family's own device scratch per problem (for scratch_per_problem).
    cuda_detector_engine(mimo_shape shape, size_t llrs, bool copy_inputs = false, size_t item_bytes = 0)
        : m_shape(shape), m_llrs(llrs), m_copy_inputs(copy_inputs), m_item_bytes(item_bytes)
    {
    }
    size_t scratch_per_problem() const final
    {
        return m_item_bytes + (m_copy_inputs ? size_t(m_shape.nr) * (m_shape.nt + 1) * sizeof(cfloat) : 0);
    }
    backend kind() const final { return backend::cuda; }

    detection_report
    detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) final;
    void detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip, float* d_llr,
                       cuda_stream_t stream) final;
    detection_report check_device_status(cuda_stream_t stream) final;

protected:
    /// Enqueues the detection of `batch` (> 0) problems whose H, y and LLRs the
    /// device reads and writes at d_H, d_y, d_llr, on `stream`, bad problems
    /// reported into `sink`.
    virtual void launch(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip, float* d_llr,
                        fault_sink sink, cudaStream_t stream) = 0;

private:
    mimo_shape m_shape;
    size_t m_llrs;
    bool m_copy_inputs;
    size_t m_item_bytes;
    cuda_stream m_stream;
    device_buffer<cfloat> m_dH, m_dy; // the copied inputs (copy_inputs)
    host_input<cfloat> m_H, m_y;
    host_output<float> m_llr;
    device_faults m_host_faults; // the host path's, apart from device calls still pending
    device_faults m_faults;      // the device path's, collected by check_device_status
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace detail
} // namespace mimo_gpu
