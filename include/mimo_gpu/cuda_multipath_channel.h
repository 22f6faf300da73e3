// multipath_channel applied on the GPU, for a channel model that keeps up with
// a GPU transmitter and receiver (the loopback flowgraph): the model, its taps
// and its counter-based noise are multipath_channel's own, so the CPU and this
// class give the same samples to rounding for the same seed and inputs. The
// taps of a run (a few hundred values; with Doppler its snapshots) cross to
// the GPU, and the samples where they are in host memory; the samples are
// convolved, rotated and noised there.
#pragma once

#include <mimo_gpu/multipath_channel.h>

#include <memory>

namespace mimo_gpu {

class cuda_multipath_channel
{
public:
    /// Largest nr and nt (the receiver's and transmitter's antennas).
    static constexpr int max_antennas = 8;

    /// std::invalid_argument for bad fields (as multipath_channel) or more than
    /// max_antennas; std::runtime_error without a usable GPU.
    explicit cuda_multipath_channel(const multipath_config& config);
    ~cuda_multipath_channel();

    /// The model (SNR, frequency response of the last run, delays).
    multipath_channel& model();
    const multipath_channel& model() const;

    /// `frames` runs of `samples` input samples each (frames back to back, as
    /// multipath_channel::run would take them one by one): tx[t] points to
    /// antenna t's frames * samples samples, rx[r] to antenna r's frames *
    /// model().output_samples(samples), each in host memory (ordinary or
    /// page-locked) or device memory. Returns when rx is written.
    void
    run_frames(const cfloat* const* tx, size_t samples, size_t frames, cfloat* const* rx);

private:
    struct engine;
    std::unique_ptr<engine> m_engine;
};

} // namespace mimo_gpu
