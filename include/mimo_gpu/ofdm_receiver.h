// MIMO-OFDM receiver front end: antenna samples -> frame timing and CFO
// (Schmidl-Cox on the preamble, all nr antennas combined, then a matched-filter
// search for the window that holds the channel) -> CFO correction, CP removal
// and FFT -> least-squares channel estimates on each antenna's pilot comb,
// interpolated to every data resource element -> noise variance from the
// pilots -> the detector's inputs: H and y in resource-element order
// (ofdm_grid.h) and N0 (docs/front_end.md).
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/ofdm_grid.h>

#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

namespace detail {
struct jakes_model;
struct frame_before;
} // namespace detail

enum class time_interpolation {
    /// a channel a slot for its D data symbols, the mean of its pilot symbols'
    /// estimates: C = slots*U channels, S = D
    hold,
    /// between the two pilot symbols around each data symbol (the nearest one
    /// held before the frame's first and after its last): S = 1
    linear,
    /// LMMSE across the frame's pilot symbols (up to 4 nearest) for a Jakes
    /// Doppler spectrum, its maximum Doppler estimated per frame from the
    /// correlation of consecutive pilot symbols: averages them when the channel
    /// holds, follows it when it fades: S = 1
    lmmse
};

enum class frequency_interpolation {
    linear, ///< between the two comb pilots around a subcarrier
    /// LMMSE over the `lmmse_window` nearest comb pilots, for delays spread
    /// uniformly over `lmmse_delay_spread` samples (around the channel's mean
    /// delay; estimated: over the span the pilots show), at the SNR the pilots
    /// show (less noise than linear, see docs)
    lmmse
};

struct ofdm_receiver_config {
    int nr = 2;
    time_interpolation interpolation = time_interpolation::hold;
    frequency_interpolation frequency = frequency_interpolation::lmmse;
    int lmmse_window = 8; ///< comb pilots per LMMSE estimate (2..16)
    /// samples; -1: estimated per frame, the span of delays the pilots' delay
    /// profile shows above the noise (between half a sample and twice the
    /// cyclic prefix; lib/core/ofdm/delay_profile.h)
    double lmmse_delay_spread = -1;
    /// Schmidl-Cox metric |P|^2 / R^2 (0..1) a preamble must exceed.
    float sync_threshold = 0.15f; // noise or data alone: about 1 / (N nr / 2)
    /// Samples the FFT window starts before the first path found, inside the
    /// cyclic prefix: room for timing error and precursors.
    int window_backoff = -1; ///< -1: cp_length / 8
    /// Noise per receive antenna, from each antenna's share of the pilots'
    /// delay profile (so with LMMSE in frequency and the delay spread
    /// estimated); where the antennas' noise differs by more than 1.5 dB, each
    /// antenna's y and row of H are scaled by sqrt(N0 / N0_r) (whitened: the
    /// detector's one N0 then holds for every row). false: one N0 for all,
    /// y and H as measured.
    bool noise_per_antenna = true;
    /// Where demodulation and estimation run (synchronisation runs on the CPU).
    backend requested = backend::automatic;
    /// ofdm_stream_receiver: how long it may wait for a batch of frames
    /// before it takes the frames there are, in milliseconds: on the CPU
    /// (batches demodulated side by side where cores are free) always, on the
    /// GPU while it batches (gpu_batch_speed). Bounds the latency batches add
    /// when samples come at the air rate; a stream that comes faster (a
    /// recording, a receiver behind) fills its batches sooner.
    double max_batch_wait_ms = 3.0;
    /// ofdm_stream_receiver on the GPU: searches and demodulates batches of
    /// short frames (up to 8 frames or 2^19 samples over all antennas; LTE 20
    /// MHz 2x2: 7, NR 100 MHz 4x4: 1), waiting up to max_batch_wait_ms for
    /// one, only while the samples come at least this many times the air rate
    /// (grid.sample_rate; the slower of the last two 2 ms spans): a recording
    /// replayed fills batches at once, a radio's stream at the air rate pays
    /// no latency. A chain slower than this never batches. Each call then
    /// costs its launches and waits once a batch, not once a frame. 0:
    /// batches whatever the pace; infinity: a frame at a time.
    double gpu_batch_speed = 2.0;
    /// Estimation across frames (LMMSE in time only; else std::invalid_argument):
    /// a frame that starts at most two frames' length after the last frame
    /// received adds that frame's pilot symbols to its time filter, weighed by
    /// the Doppler model (a slow channel averages both frames', a fast one
    /// hardly uses the older). Needs the frames' places in the stream:
    /// ofdm_stream_receiver, or receive_frames with stream positions.
    bool across_frames = false;

    /// Whether each antenna's noise is measured (noise_per_antenna, several
    /// antennas and the delay profile measured); else every antenna has the
    /// frame's N0.
    bool measures_antenna_noise() const
    {
        return noise_per_antenna && nr > 1 &&
               frequency == frequency_interpolation::lmmse && lmmse_delay_spread < 0;
    }
};

struct sync_result {
    bool found = false;     ///< a preamble above the threshold
    bool complete = false;  ///< the whole frame lies in the buffer
    size_t frame_start = 0; ///< sample index of the preamble's FFT window
    float cfo = 0;    ///< carrier frequency offset in subcarrier spacings (|cfo| < 1)
    float metric = 0; ///< Schmidl-Cox metric at the preamble
};

struct front_end_frame {
    sync_result sync;
    float n0 = 0; ///< noise variance per resource element, from the pilots
    /// the LMMSE model's delay spread in samples (estimated or fixed; 0 with
    /// linear interpolation in frequency)
    float delay_spread = 0;
    /// Hz: the maximum Doppler the LMMSE time filter measured from the pilot
    /// symbols (its model may be wider by a turn the Doppler explains,
    /// time_filter.h); 0 with hold and linear
    float doppler = 0;
    /// Per receive antenna: its noise variance per resource element (n0 at
    /// every antenna where it is not measured: ofdm_receiver_config), and the
    /// scale its y and row of H carry (1 unless `whitened`; the true channel
    /// scaled alike compares with H).
    std::vector<float> antenna_n0, antenna_scale;
    bool whitened = false; ///< the antennas' noise differed: y and H whitened
    /// H estimated with the frame before's pilot symbols too (across_frames)
    bool linked = false;
    size_t channels = 0;         ///< C
    int symbols_per_channel = 1; ///< S
    std::vector<cfloat> H;       ///< C * nr * nt (detector layout)
    std::vector<cfloat> y;       ///< C * S * nr, resource-element order
    /// Per pilot symbol q (q = j P + p: slot j's p-th, ofdm_grid.h), the
    /// estimate interpolated in frequency at every used subcarrier:
    /// pilot_channels[(q * U + i) * nr * nt + r * nt + t].
    std::vector<cfloat> pilot_channels;
    /// Per pilot symbol q, the LS estimate at each pilot: pilot_ls[(q * U + i) *
    /// nr + r] for antenna t = i mod nt.
    std::vector<cfloat> pilot_ls;
};

class ofdm_receiver
{
public:
    /// Throws std::invalid_argument for a bad grid or configuration.
    ofdm_receiver(const ofdm_grid& grid, const ofdm_receiver_config& config);
    ~ofdm_receiver();
    const ofdm_grid& grid() const { return m_grid; }
    const ofdm_receiver_config& config() const { return m_config; }
    int window_backoff() const { return m_backoff; }

    /// Searches rx (samples * nr, antenna-interleaved) from sample `from` for the
    /// first preamble (lib/core/ofdm/frame_search.h has the rule; positions up to
    /// N + CP before `from` are searched too, so that a preamble `from` falls
    /// into is judged from its start). found == false: none in the buffer.
    sync_result synchronize(const cfloat* rx, size_t samples, size_t from = 0) const;
    /// As synchronize(), on samples in device memory (CUDA backend only, else
    /// std::logic_error): the metric and the matched filter run on the GPU, the
    /// decisions on the host; same results to rounding. Waits for `stream`.
    sync_result synchronize_device(const cfloat* d_rx,
                                   size_t samples,
                                   size_t from,
                                   cuda_stream_t stream) const;

    /// Demodulates and estimates the frame `sync` found (complete == true, else
    /// std::invalid_argument).
    front_end_frame receive(const cfloat* rx, size_t samples, const sync_result& sync);

    /// Several frames of one buffer at once (each found and complete): on CUDA
    /// one batch through the FFTs and kernels, on the CPU side by side.
    /// positions (one a sync, or null): each frame's start in the stream, in
    /// samples, for estimation across frames (ofdm_receiver_config::across_frames):
    /// a frame is linked to the frame before it in the call, or to the last
    /// frame of the call before. Without positions nothing is linked, and the
    /// next call links nothing to these frames.
    std::vector<front_end_frame> receive_frames(const cfloat* rx,
                                                size_t samples,
                                                const std::vector<sync_result>& syncs,
                                                const uint64_t* positions = nullptr);

    /// The device path (CUDA backend only, else std::logic_error): rx in device
    /// memory (samples * nr), asynchronous on `stream` (without positions: no
    /// frame is estimated across frames, nor the next call's first); the outputs stay on
    /// the device, owned by the receiver until its next call, frame f's at f * channels *
    /// nr * nt (H), f * problems * nr (y) and f (n0), so a detector can take them without
    /// a trip through the host.
    struct device_frames {
        const cfloat* H = nullptr;
        const cfloat* y = nullptr;
        const float* n0 = nullptr;
        size_t frames = 0, channels = 0; ///< channels per frame
        int symbols_per_channel = 1;
    };
    device_frames receive_device(const cfloat* d_rx,
                                 size_t samples,
                                 const std::vector<sync_result>& syncs,
                                 cuda_stream_t stream);

    backend active_backend() const;

    /// As receive(), with a known channel instead of the estimate (a genie for
    /// perfect-CSI comparisons): H_known[(i * nr + r) * nt + t] at the receiver's
    /// window for every slot, and N0; antenna_n0 (nr values, or null): each
    /// antenna's noise where they differ, whitened by the estimate's rule.
    front_end_frame receive_known_channel(const cfloat* rx,
                                          size_t samples,
                                          const sync_result& sync,
                                          const cfloat* H_known,
                                          float n0,
                                          const float* antenna_n0 = nullptr);
    /// As receive_known_channel, with the known channel of every data symbol (a
    /// genie under Doppler): H_symbols[((j * D + s) * U + i) * nr * nt + r * nt
    /// + t] for data symbol s of slot j. H has a channel per data symbol (S =
    /// 1); pilot_channels holds each slot's first data symbol's at each of the
    /// slot's pilot symbols.
    front_end_frame receive_known_channels(const cfloat* rx,
                                           size_t samples,
                                           const sync_result& sync,
                                           const cfloat* H_symbols,
                                           float n0,
                                           const float* antenna_n0 = nullptr);

private:
    /// The frame's grid into Y: (k * U + i) * nr + r. Y is the caller's, so
    /// frames can be demodulated on several threads at once.
    void
    demodulate(const cfloat* rx, const sync_result& sync, std::vector<cfloat>& Y) const;
    /// Estimates the frame's channel from its grid Y; returns the LMMSE time
    /// filter's model (lib/core/ofdm/time_filter.h) when it runs, and in
    /// antenna_time_noise, where the frame is whitened, each receive antenna's
    /// noise for that filter (empty: the model's for every antenna).
    detail::jakes_model estimate(front_end_frame& f,
                                 const cfloat* Y,
                                 std::vector<float>& antenna_time_noise) const;
    /// The frame's y from its grid (whitened where f is).
    void emit_y(front_end_frame& f, const cfloat* Y) const;
    /// The frame's H from its pilot symbols' estimates (estimate()'s model and
    /// antenna noise; before: the frame before's when linked, else null).
    void emit_channels(front_end_frame& f,
                       const detail::jakes_model& model,
                       const std::vector<float>& antenna_time_noise,
                       const detail::frame_before* before) const;
    /// The genies' common part: y demodulated, slot j's pilot symbols given
    /// the known channel at H + j * slot_stride (U nr nt values), H emitted
    /// from them.
    front_end_frame receive_known(const cfloat* rx,
                                  const sync_result& sync,
                                  const cfloat* H,
                                  size_t slot_stride,
                                  float n0,
                                  const float* antenna_n0);

    ofdm_grid m_grid;
    ofdm_receiver_config m_config;
    int m_backoff;
    float m_spread_over_n; ///< a fixed LMMSE delay spread over the FFT size (< 0:
                           ///< estimated)
    struct impl;
    std::unique_ptr<impl> m_impl;
};

} // namespace mimo_gpu
