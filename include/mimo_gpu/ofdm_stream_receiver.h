// The receiver front end on a stream of antenna samples, as a radio or a
// recording delivers them: samples go in as they come (one buffer per antenna),
// whole frames come out as H and y for the detector, in the layout of
// ofdm_receiver.h. The samples are kept once, where the receiver works on them:
// on CUDA in a ring of device memory per antenna, filled through page-locked
// staging (copies of one chunk overlapping the transfer of the next), searched
// there (frame_search.h's rule, one host round trip per search) and demodulated
// there in batches, H and y written straight into device memory when the next
// block reads it (or, with frames in flight, copied there from the receiver's
// own in the next call); on the CPU in an antenna-interleaved host window. A frame is
// never lost to how the stream is cut: frames across calls, a stream ending
// mid-frame, gaps and noise between frames.
#pragma once

#include <mimo_gpu/ofdm_receiver.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace mimo_gpu {

/// A frame received from the stream.
struct stream_frame {
    uint64_t start = 0;     ///< stream sample index of the preamble's FFT window
    float cfo = 0;          ///< subcarrier spacings
    float metric = 0;       ///< Schmidl-Cox metric at the preamble
    float n0 = 0;           ///< noise variance per resource element, from the pilots
    float delay_spread = 0; ///< the LMMSE model's delay spread in samples
    float doppler = 0;      ///< Hz, the LMMSE time filter's (0 with hold and linear)
    /// Per receive antenna, its noise variance (n0 at each where not measured),
    /// and whether H and y were whitened (front_end_frame's fields).
    std::vector<float> antenna_n0;
    bool whitened = false;
    /// estimated with the frame before's pilot symbols too
    /// (ofdm_receiver_config::across_frames)
    bool linked = false;
};

class ofdm_stream_receiver
{
public:
    /// Throws std::invalid_argument for a bad grid or configuration (as
    /// ofdm_receiver), std::runtime_error when CUDA is demanded and absent.
    ofdm_stream_receiver(const ofdm_grid& grid, const ofdm_receiver_config& config);
    ~ofdm_stream_receiver();

    const ofdm_grid& grid() const;
    backend active_backend() const;
    int symbols_per_channel() const;
    size_t H_items_per_frame() const; ///< channels per frame (H items of nr * nt)
    size_t y_items_per_frame() const; ///< resource elements per frame (y items of nr)

    /// Samples per antenna that push() takes now.
    size_t room() const;
    /// Frames a receive() may hand back together at most when it waits for a
    /// batch (the CPU's, demodulated side by side: 8; on CUDA up to 8 short
    /// frames, see ofdm_receiver_config::gpu_batch_speed, else 1): a caller's
    /// output room for two batches keeps it busy.
    size_t max_batch_frames() const;
    /// Appends `count` (<= room()) samples of each antenna: antennas[r] points to
    /// antenna r's, in host memory (or device memory, on CUDA). Page-locked and
    /// device memory is copied from where it is, so it must stay as it is until
    /// the next receive() returns.
    void push(const cfloat* const* antennas, size_t count);
    /// No samples will follow: frames the stream cut are not waited for.
    void end_stream();
    bool ended() const;

    /// Up to max_frames whole frames from the samples pushed, in order. Frame f's
    /// H goes to H + f * H_items_per_frame() * nr * nt and its y to
    /// y + f * y_items_per_frame() * nr, in device memory when outputs_on_device
    /// (CUDA only), else in host memory. A frame whose pilots hold non-finite
    /// samples (no channel estimate or N0 can be made) is dropped and counted
    /// (frames_dropped()), and the frames after it close up.
    std::vector<stream_frame>
    receive(size_t max_frames, cfloat* H, cfloat* y, bool outputs_on_device);
    /// Whether another receive() would go on without new samples: frames may
    /// wait that the last one had no room for or left in flight, or samples that
    /// landed after its search began (the CUDA window copies them while it
    /// searches) let it go on.
    bool frames_waiting() const;

    /// On CUDA, receive() may leave the frames it finds in flight: it queues
    /// their demodulation into the receiver's own GPU memory and returns, and
    /// the next receive() hands them on (before any frame it finds itself),
    /// after its own search, which runs on the GPU beside them. The host then
    /// waits for a demodulation only once it has searched the next samples.
    /// Frames in flight take the caller's room first; frames_waiting() is true
    /// while any are in flight. Off by default; a CPU receiver ignores it.
    /// Throws std::logic_error while frames are in flight.
    void set_frames_in_flight(bool on);
    /// Frames found whose H and y no receive() has handed on yet (in flight,
    /// or demodulated where the last call had no room for them). Until they
    /// are collected, samples_outside_frames() counts them as received.
    size_t frames_in_flight() const;
    /// Hands on up to max_frames of the frames in flight as receive() would,
    /// without searching: for a caller with nothing to overlap them with (no
    /// new samples came), so that they need not wait for its next call.
    std::vector<stream_frame> hand_on_frames_in_flight(size_t max_frames,
                                                       cfloat* H,
                                                       cfloat* y,
                                                       bool outputs_on_device);
    /// Samples per antenna the receiver waits for before it searches again (the
    /// rest of a frame it has found, or what deciding a preamble needs); 0: it
    /// would search any new samples.
    size_t samples_wanted() const;

    uint64_t samples_pushed() const;
    /// Samples left behind that belonged to no frame received (noise, gaps, a
    /// frame cut by the end of the stream, dropped frames); counted as the window
    /// lets them go.
    uint64_t samples_outside_frames() const;
    uint64_t frames_received() const;
    uint64_t frames_dropped() const;

    /// Where the time went (wall clock, seconds): taking samples in (host copies,
    /// with any wait for a staging chunk an earlier transfer still reads; on
    /// CUDA the transfers run meanwhile), waiting for them to land (CUDA: a
    /// search needs them, or the caller's memory is read in place), searching
    /// them for frames, demodulating frames (with frames in flight: queuing
    /// them, waiting for the earlier ones and handing those on).
    struct time_spent {
        double push = 0, land = 0, search = 0, demodulate = 0;
        uint64_t pushes = 0, lands = 0, searches = 0, batches = 0;
    };
    time_spent timing() const;

private:
    /// The found frames demodulated within the call, those dropped left out.
    std::vector<stream_frame> demodulate_now(const std::vector<sync_result>& found,
                                             cfloat* H,
                                             cfloat* y,
                                             bool outputs_on_device);
    /// Frames in flight: collects the last call's, hands on what fits, queues
    /// the found ones.
    std::vector<stream_frame> hand_on_and_queue(const std::vector<sync_result>& found,
                                                size_t max_frames,
                                                cfloat* H,
                                                cfloat* y,
                                                bool outputs_on_device);

    struct engine;
    std::unique_ptr<engine> m_engine;
};

} // namespace mimo_gpu
