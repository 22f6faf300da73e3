// Where ofdm_stream_receiver keeps a stream's recent samples and works on them:
// the host (CPU backend) or the GPU (CUDA). Positions and frame starts are
// stream sample indices; the window holds samples [begin, end) of every
// antenna, at most capacity() of them.
#pragma once

#include "frame_search.h"

#include <mimo_gpu/ofdm_stream_receiver.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace mimo_gpu {
namespace detail {

class sample_window
{
public:
    virtual ~sample_window() = default;
    virtual backend kind() const = 0;
    virtual size_t capacity() const = 0;
    /// Samples [end, end + count) of each antenna (host memory) join the window.
    virtual void append(const cfloat* const* antennas, size_t count, uint64_t end) = 0;
    /// Samples before `begin` are no longer needed.
    virtual void release(uint64_t begin) = 0;
    /// Waits until append() has read the caller's memory and its samples are in
    /// the window.
    virtual void finish_appends() {}
    /// Whether appended samples land only at finish_appends() (asynchronous
    /// copies): searches before then must not reach them.
    virtual bool appends_lag() const { return false; }
    /// Whether the copies of appends not yet finished still read the caller's
    /// memory (copied from where it is: page-locked or device memory): the
    /// caller may reuse it only after finish_appends(). Otherwise (the samples
    /// were staged on the host) they may land later, while the caller goes on.
    virtual bool appends_read_callers_memory() const { return appends_lag(); }
    /// Frames a batch should hold, up to k_most_frames_per_batch: the host
    /// window demodulates a batch's frames side by side (a frame a free
    /// core); the GPU's searches and demodulates a batch with one launch
    /// sequence and wait (short frames). The stream waits for that many
    /// (ofdm_stream_receiver.cc's wait_for_a_batch); 1: as each completes.
    virtual size_t frames_per_batch() const { return 1; }
    /// The most frames_per_batch() gives.
    virtual size_t max_frames_per_batch() const { return 1; }
    /// Whether batches are waited for only while the samples come at least
    /// ofdm_receiver_config::gpu_batch_speed times the air rate, else always.
    virtual bool batches_need_a_fast_stream() const { return false; }
    /// frame_search::find over the window's samples [begin, end).
    virtual walk_result search(uint64_t begin,
                               uint64_t end,
                               uint64_t search_begin,
                               uint64_t from,
                               size_t max_frames,
                               bool ended) = 0;
    /// Demodulates and estimates the frames (found and complete) into H and y
    /// (frame f at f * H_per_frame / f * y_per_frame values); returns their N0
    /// and delay spread (non-finite N0: the pilots held non-finite samples).
    virtual std::vector<stream_frame> demodulate(const std::vector<sync_result>& frames,
                                                 cfloat* H,
                                                 cfloat* y,
                                                 bool on_device) = 0;
    /// Moves frame `from`'s H and y to frame slot `to` (< from) of the outputs.
    virtual void
    move_frame(cfloat* H, cfloat* y, size_t from, size_t to, bool on_device) = 0;

    /// Whether frames can be demodulated while the caller goes on (the CUDA
    /// window's): queue_demodulation, then demodulation_results in a later
    /// call, then hand_on and finish_hand_on; the next queue_demodulation only
    /// once every frame of the last one is handed on or given up.
    virtual bool demodulates_in_flight() const { return false; }
    /// Queues the frames' demodulation into the window's own memory.
    virtual void queue_demodulation(const std::vector<sync_result>&);
    /// Waits for the queued frames; their results (non-finite N0: dropped).
    virtual std::vector<stream_frame> demodulation_results();
    /// Queues copies of frames `which` (indices into the last queued batch)
    /// into frame slots 0, 1, ... of H and y; finish_hand_on() waits for them.
    virtual void
    hand_on(const std::vector<size_t>& which, cfloat* H, cfloat* y, bool on_device);
    virtual void finish_hand_on() {}
};

/// Frames a batch holds at most, on either backend. The CPU's choice: LTE 20
/// MHz 2x2 on 16 cores (H100 host, the same lease, two runs each) ran 2:
/// 0.37/0.74x real time, 4: 0.72/0.72x, 6: 0.87/1.09x, 8: 1.03/0.62x (that
/// host's speed varies run to run).
constexpr size_t k_most_frames_per_batch = 8;

/// Samples per antenna a window keeps at most: room for a frame found late in
/// the window to complete, with the search's look-back and a few frames more.
size_t window_samples(const ofdm_grid& grid);

std::unique_ptr<sample_window> make_host_window(const ofdm_grid& grid,
                                                const ofdm_receiver_config& config);
#ifdef MIMO_GPU_HAVE_CUDA
std::unique_ptr<sample_window> make_cuda_window(const ofdm_grid& grid,
                                                const ofdm_receiver_config& config);
#endif

} // namespace detail
} // namespace mimo_gpu
