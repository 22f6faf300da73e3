// The interface behind mimo_gpu::batched_qr: one CPU and one CUDA implementation.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/batched_qr.h>

#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

namespace mimo_gpu {

class qr_engine
{
public:
    virtual ~qr_engine() = default;
    virtual backend kind() const = 0;
    /// Bad problems' items are overwritten with k_erased_item_value.
    virtual detection_report
    run(const cfloat* H, const cfloat* y, size_t batch, float* items) = 0;
    virtual void run_device(const cfloat*, const cfloat*, size_t, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu::batched_qr::run_device needs the CUDA backend");
    }
    virtual detection_report check_device_status(cuda_stream_t)
    {
        throw std::logic_error(
            "mimo_gpu::batched_qr::check_device_status needs the CUDA backend");
    }
};

namespace detail {
/// What an erased problem's QR item holds: NaN, which a detector reading
/// the items (nway_ssfe_detector::detect_qr) erases in turn.
constexpr float k_erased_item_value = std::numeric_limits<float>::quiet_NaN();
std::unique_ptr<qr_engine> make_cpu_qr_engine(mimo_shape shape, int orders);
std::unique_ptr<qr_engine>
make_cuda_qr_engine(mimo_shape shape,
                    int orders); // defined in the .cu (CUDA builds only)
} // namespace detail
} // namespace mimo_gpu
