// The receiver front end's CUDA engine: frame synchronisation over device
// samples (frame_search.h's rule: the metric, runs and decisions on the GPU,
// the walk on the host, one round trip per search), and a batch of frames
// through CFO correction, a batched cuFFT, pilot LS estimation with the delay
// compensation and interpolation of the CPU path, the noise estimate, and the
// detector's H and y. Same arithmetic as ofdm_receiver.cc and frame_search.cc,
// other FFT and reduction order: results agree to rounding.
#pragma once

#include "frame_search.h"

#include <mimo_gpu/ofdm_receiver.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// Where the kernels find sample n of antenna r (n counts from the stream's
/// start): base[(n & mask) * sample_stride + r * antenna_stride], in device
/// memory. A linear antenna-interleaved buffer, or a ring of power-of-two
/// capacity per antenna (a stream's recent samples, antenna after antenna).
struct sample_view {
    const cfloat* base = nullptr;
    uint64_t mask = ~uint64_t(0);
    size_t sample_stride = 1, antenna_stride = 0;

    static sample_view interleaved(const cfloat* p, int nr)
    {
        return { p, ~uint64_t(0), size_t(nr), 1 };
    }
    static sample_view ring(const cfloat* p, size_t capacity)
    {
        return { p, capacity - 1, 1, capacity };
    }
};

class cuda_front_end
{
public:
    /// preamble: frame_search's time samples of the preamble.
    cuda_front_end(const ofdm_grid& grid,
                   const ofdm_receiver_config& config,
                   int backoff,
                   const std::vector<cfloat>& preamble);
    ~cuda_front_end();

    /// Host in, host out (front_end_frame vectors filled), synchronous.
    /// positions: each frame's place in the stream, for estimation across
    /// frames (ofdm_receiver::receive_frames), or null.
    void run(const cfloat* rx,
             size_t samples,
             const sync_result* syncs,
             size_t frames,
             front_end_frame* out,
             const uint64_t* positions = nullptr);

    /// Device in (d_rx: samples * nr, antenna-interleaved), device out
    /// (device_H/y/n0), asynchronous on `stream`. frame_start / cfo: host arrays
    /// of `frames` values.
    void run_device(const cfloat* d_rx,
                    size_t samples,
                    const size_t* frame_start,
                    const float* cfo,
                    size_t frames,
                    cudaStream_t stream,
                    const uint64_t* positions = nullptr);
    /// As run_device, from any sample view, with H and y written to H_out and
    /// y_out (device memory: frame f's at f * H_per_frame() and f * y_per_frame())
    /// or, where they are null, to device_H() and device_y(). N0 and the delay
    /// spread per frame go to device_n0() and device_spread(). positions:
    /// each frame's place in the stream for estimation across frames
    /// (ofdm_receiver_config::across_frames; the stream window's frame
    /// starts), or null: none linked, and nothing to the next call's.
    /// also_enqueue: the caller's copies on `stream` after the demodulation's
    /// (its downloads of the per-frame results), recorded with them: once a
    /// call of a shape (frames, flags, view, no buffer grown since) repeats,
    /// the sequence is replayed as one CUDA graph (replayed_launches), so
    /// also_enqueue must be the same every call of a shape, copy the same
    /// memory (pinned buffers made before the call) and make no call that a
    /// stream capture forbids.
    void run_view(const sample_view& v,
                  const size_t* frame_start,
                  const float* cfo,
                  size_t frames,
                  cfloat* H_out,
                  cfloat* y_out,
                  cudaStream_t stream,
                  const uint64_t* positions = nullptr,
                  const std::function<void()>& also_enqueue = {});

    /// Frames in the samples of `v` before samples_end, from `from` on, the
    /// positions from search_begin searched (frame_search::find's contract).
    /// Waits for `stream`. May run while a run_view on another stream is in
    /// flight (the stream window's frames in flight): the two share no device
    /// memory but the samples, which both only read.
    walk_result find_frames(const sample_view& v,
                            size_t samples_end,
                            size_t search_begin,
                            size_t from,
                            size_t max_frames,
                            bool ended,
                            cudaStream_t stream);
    /// Makes the search's device memory for up to `positions` positions at once
    /// (a stream's window), so that no search allocates (which synchronises).
    void reserve_search(size_t positions);

    const cfloat* device_H() const;
    const cfloat* device_y() const;
    const float* device_n0() const;
    const float* device_spread() const;
    /// Each frame's noise per receive antenna (frames * nr), or null where the
    /// configuration does not measure it (every antenna has the frame's N0).
    const float* device_antenna_n0() const;
    /// Hz per frame, the LMMSE time filter's Doppler; null without it.
    const float* device_doppler() const;
    /// Per frame of the last call, 1 where it was estimated across frames
    /// (linked to the frame before); null where no frame of it could be.
    const int* linked_frames() const;
    size_t H_per_frame() const; ///< channels * nr * nt
    size_t y_per_frame() const; ///< data elements * nr

private:
    /// The LMMSE model's spread and centre per frame from the pilots' delay
    /// profile (delay_profile.h), from `flat` (the LS estimates, mean delay out).
    void estimate_delay_support(const float2* flat, size_t frames, cudaStream_t stream);

    struct impl;
    std::unique_ptr<impl> m;
};

} // namespace detail
} // namespace mimo_gpu
