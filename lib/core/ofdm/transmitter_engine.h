// Where ofdm_stream_transmitter modulates: the CPU or the GPU.
#pragma once

#include <mimo_gpu/ofdm_stream_transmitter.h>

#include <memory>

namespace mimo_gpu {
namespace detail {

class transmitter_engine
{
public:
    virtual ~transmitter_engine() = default;
    virtual backend kind() const = 0;
    /// As ofdm_stream_transmitter::modulate.
    virtual void
    modulate(const uint8_t* bits, size_t frames, cfloat* const* antennas) = 0;
};

#ifdef MIMO_GPU_HAVE_CUDA
std::unique_ptr<transmitter_engine> make_cuda_transmitter(const ofdm_grid& grid);
#endif

} // namespace detail
} // namespace mimo_gpu
