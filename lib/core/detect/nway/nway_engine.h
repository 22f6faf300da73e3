// The engines behind mimo_gpu::nway_ssfe_detector (one CPU, one CUDA) and the
// family's extension: detection from batched_qr's items.
#pragma once

#include <mimo_gpu/nway_ssfe_detector.h>

#include "../engine/detector_engine.h"

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// What every nway engine adds to detector_engine (engine_extension<nway_qr_search>).
class nway_qr_search
{
public:
    virtual ~nway_qr_search() = default;
    /// Host memory. Bad problems (non-finite or singular items) get LLRs 0 and are
    /// reported.
    virtual detection_report
    detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) = 0;
    /// Device memory, asynchronous on `stream`; reported by check_device_status.
    virtual void
    detect_qr_device(const float*, size_t, float, float, float*, cuda_stream_t)
    {
        throw std::logic_error(
            "mimo_gpu::nway_ssfe_detector::detect_qr_device needs the CUDA backend");
    }
};

std::unique_ptr<detector_engine> make_cpu_nway_engine(const nway_config& config);
std::unique_ptr<detector_engine>
make_cuda_nway_engine(const nway_config& config); // the .cu (CUDA builds only)

} // namespace detail
} // namespace mimo_gpu
