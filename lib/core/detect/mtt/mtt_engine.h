// The interface behind the MTT/OT detector: one CPU and one CUDA implementation.
#pragma once

#include <mimo_gpu/detector.h>

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// multipass: MTT (every stage's candidate list); else OT (the last stage's only).
struct mtt_config {
    mimo_shape shape;
    modulation mod;
    bool multipass;
};

class mtt_engine
{
public:
    virtual ~mtt_engine() = default;
    virtual backend kind() const = 0;
    /// One H per problem; clip as the detector's llr_clip (0: none, unreached +-1000).
    virtual void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) = 0;
    virtual void detect_device(const cfloat*, const cfloat*, size_t, float, float, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu: mtt detect_device needs the CUDA backend");
    }
    virtual void check_device_status(cuda_stream_t) {}
};

std::unique_ptr<mtt_engine> make_cpu_mtt_engine(const mtt_config& config);
std::unique_ptr<mtt_engine> make_cuda_mtt_engine(const mtt_config& config); // the .cu (CUDA builds only)

} // namespace detail
} // namespace mimo_gpu
