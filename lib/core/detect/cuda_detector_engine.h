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
    /// nr, nt: the shape; llrs: LLRs per problem.
    cuda_detector_engine(mimo_shape shape, size_t llrs) : m_shape(shape), m_llrs(llrs) {}
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
    cuda_stream m_stream;
    host_input<cfloat> m_H, m_y;
    host_output<float> m_llr;
    device_faults m_faults;
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace detail
} // namespace mimo_gpu
