/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_RX_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_RX_IMPL_H

#include "plumbing/device_output_guard.h"
#include "plumbing/host_buffer_locks.h"
#include "plumbing/work_trace.h"

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/ofdm_rx.h>
#include <mimo_gpu/ofdm_stream_receiver.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// The block over the core's ofdm_stream_receiver: each call hands it the new
/// samples (all of them: the receiver keeps what it still needs) and takes the
/// whole frames that fit the outputs.
class ofdm_rx_impl : public ofdm_rx, public device_stream_reader
{
public:
    ofdm_rx_impl(const ::mimo_gpu::ofdm_grid& grid,
                 const ::mimo_gpu::ofdm_receiver_config& config,
                 bool device_buffers);

    int symbols_per_channel() const override { return d_symbols_per_channel; }
    uint64_t frames_received() const override { return d_frames; }
    uint64_t samples_dropped() const override { return d_samples_dropped; }
    uint64_t frames_dropped() const override { return d_frames_dropped; }
    double last_noise_var() const override { return d_last_n0; }
    double last_cfo() const override { return d_last_cfo; }
    std::string active_backend() const override;
    bool device_buffers() const override { return d_device_outputs; }
    /// On CUDA the samples are read where they are: a GPU channel model's device
    /// buffers stay on the GPU.
    bool reads_device_memory() const override
    {
        return d_backend == ::mimo_gpu::backend::cuda;
    }
    std::string timing_summary() const override;
    bool frame_mismatch() const override { return d_frame_mismatch; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;
    bool start() override;
    bool stop() override;

private:
    /// Whether an input has ended with nothing left beyond the `taken` samples
    /// (the receiver can take no more: it needs every antenna's samples).
    bool an_input_ran_out(size_t taken);
    /// Whether an input holds more samples than the call was given.
    bool samples_came_since(const gr_vector_int& ninput_items) const;
    void emit_tags(const ::mimo_gpu::stream_frame& f, uint64_t H_item, uint64_t y_item);
    void update_counters();
    /// Whether the samples about to be taken carry this block's frame, as far as
    /// an "ofdm_grid" tag says (a recording's); logs the difference when not.
    bool stream_frame_matches(size_t taken);
    /// On CUDA, page-locks the input buffers where GNU Radio made them, so that
    /// the samples go to the GPU with no staging copy (once per run; logged).
    void lock_input_buffers();
    /// Frames of room downstream: two of the receiver's batches and a few
    /// frames, within a size (k_buffered_frames where batches are one frame).
    int buffered_frames() const;

    const ::mimo_gpu::ofdm_grid d_grid;
    const ::mimo_gpu::ofdm_receiver_config d_config;
    /// Made again by start() when the flowgraph runs a second time.
    std::unique_ptr<::mimo_gpu::ofdm_stream_receiver> d_receiver;
    const ::mimo_gpu::backend d_backend;
    const int d_symbols_per_channel;
    const bool d_device_outputs;
    const int d_H_per_frame; // H items per frame
    const int d_y_per_frame; // y items per frame
    const int d_chunk;       // samples a call waits for (a quarter frame)
    std::vector<const gr_complex*> d_inputs;
    device_output_guard d_output_guard;
    work_trace d_trace{ "ofdm_rx" };
    bool d_failed = false;
    bool d_started = false;
    mutable std::mutex d_timing_mutex;
    ::mimo_gpu::ofdm_stream_receiver::time_spent d_timing; // a copy for timing_summary()
    std::atomic<bool> d_frame_mismatch{ false };
    bool d_inputs_checked = false;
    host_buffer_locks d_locks; // input buffers page-locked in place (CUDA)
    uint64_t d_unread_at_end =
        0; // samples of longer streams past the end of the shortest
    std::atomic<uint64_t> d_frames{ 0 }, d_frames_dropped{ 0 }, d_samples_dropped{ 0 };
    std::atomic<double> d_last_n0{ 0 }, d_last_cfo{ 0 };
};

} // namespace mimo_gpu
} // namespace gr

#endif
