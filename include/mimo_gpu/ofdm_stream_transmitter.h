// The transmitter for a stream of frames, as the ofdm_tx block runs it: a batch
// of frames' coded bits to nt sample streams, one buffer per antenna. On the
// CPU, ofdm_transmitter frame by frame over the cores; on CUDA, the mapping,
// one batched inverse FFT and the cyclic prefixes on the GPU, the bits read and
// the samples written where they are (host or device memory). Both send the
// same samples to rounding (the FFTs').
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/ofdm_grid.h>

#include <memory>
#include <stdexcept>

namespace mimo_gpu {

/// Bits of a frame that were not all 0 or 1: which frame of the batch.
class bad_frame_bits : public std::invalid_argument
{
public:
    explicit bad_frame_bits(size_t frame);
    size_t frame() const { return m_frame; }

private:
    size_t m_frame;
};

class ofdm_stream_transmitter
{
public:
    /// Throws std::invalid_argument for a grid that fails validate(),
    /// std::runtime_error when CUDA is demanded and absent.
    ofdm_stream_transmitter(const ofdm_grid& grid, backend requested);
    ~ofdm_stream_transmitter();

    const ofdm_grid& grid() const;
    backend active_backend() const;

    /// `frames` frames: bits holds frames * grid().frame_bits() bytes (0 or 1,
    /// resource-element order), antennas[t] receives antenna t's frames *
    /// grid().frame_samples() samples; on CUDA either may be device memory.
    /// Throws bad_frame_bits for the first frame that holds a byte other than
    /// 0 or 1; the frames before it are then sent (written to the outputs),
    /// the later ones' outputs are unspecified.
    void modulate(const uint8_t* bits, size_t frames, cfloat* const* antennas);

private:
    struct engine;
    std::unique_ptr<engine> m_engine;
};

} // namespace mimo_gpu
