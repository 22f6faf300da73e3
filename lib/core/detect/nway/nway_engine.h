// The interface behind mimo_gpu::nway_detector: one CPU and one CUDA implementation.
#pragma once

#include <mimo_gpu/nway_detector.h>

#include <memory>
#include <stdexcept>

namespace mimo_gpu {

class nway_engine
{
public:
    virtual ~nway_engine() = default;
    virtual backend kind() const = 0;
    /// llr_clip is read at every call (it is settable on the detector).
    /// Bad problems get LLRs 0 and are reported (fault_flags.h).
    virtual detection_report detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) = 0;
    virtual detection_report detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip,
                                    float* llr) = 0;
    virtual void detect_qr_device(const float*, size_t, float, float, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu::nway_detector::detect_qr_device needs the CUDA backend");
    }
    virtual void detect_device(const cfloat*, const cfloat*, size_t, float, float, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu::nway_detector::detect_device needs the CUDA backend");
    }
    virtual detection_report check_device_status(cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu::nway_detector::check_device_status needs the CUDA backend");
    }
};

namespace detail {
std::unique_ptr<nway_engine> make_cpu_nway_engine(const nway_config& config);
std::unique_ptr<nway_engine> make_cuda_nway_engine(const nway_config& config); // defined in the .cu (CUDA builds only)
} // namespace detail
} // namespace mimo_gpu
