// The interface behind mimo_gpu::ml_detector: one CPU and one CUDA implementation.
#pragma once

#include <mimo_gpu/ml_detector.h>

#include <memory>

namespace mimo_gpu {

class ml_engine
{
public:
    virtual ~ml_engine() = default;
    virtual backend kind() const = 0;
    /// Bad problems (non-finite input, rank-deficient H) get LLRs 0 and are reported.
    virtual detection_report detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr) = 0;
};

namespace detail {
std::unique_ptr<ml_engine> make_cpu_ml_engine(mimo_shape shape, modulation mod);
std::unique_ptr<ml_engine> make_cuda_ml_engine(mimo_shape shape, modulation mod); // defined in the .cu (CUDA builds only)
} // namespace detail
} // namespace mimo_gpu
