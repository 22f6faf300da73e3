/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_DETECTOR_IMPL_H
#define INCLUDED_MIMO_GPU_MIMO_DETECTOR_IMPL_H

#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/detector.h>
#include <mimo_gpu/detector_pipeline.h>
#include <mimo_gpu/device_memory.h>

#include "plumbing/batch_gate.h"
#include "plumbing/device_staging.h"
#include "plumbing/erasure_tags.h"
#include "plumbing/work_trace.h"
#include <gnuradio/mimo_gpu/device_buffer.h>

#include <atomic>
#include <deque>
#include <memory>

namespace gr {
namespace mimo_gpu {

/// The detector block. Received vectors go to the core in frames of up to
/// max_batch through a detector_pipeline (on CUDA: several frames in flight on
/// their own streams, copies of one overlapping another's kernels). A frame
/// submitted in one work() call is collected in the next: its inputs stay
/// unconsumed and its outputs unproduced until then, so GNU Radio's buffers
/// hold them in place meanwhile, and the tail is flushed when the stream ends.
class mimo_detector_impl : public mimo_detector, public device_stream_reader
{
public:
    mimo_detector_impl(std::unique_ptr<::mimo_gpu::detector> core,
                       double noise_var,
                       int symbols_per_channel,
                       int max_batch,
                       bool device_buffers);

    std::string algorithm() const override { return d_core->name(); }
    void set_noise_var(double noise_var) override;
    double noise_var() const override;
    void set_parameter(const std::string& name, double value) override;
    double parameter(const std::string& name) const override;
    std::string active_backend() const override;
    uint64_t erased_problems() const override { return d_erasures.erased(); }
    void set_max_wait_ms(double ms) override;
    double max_wait_ms() const override;
    bool device_buffers() const override { return d_device_stream != nullptr; }
    bool reads_device_memory() const override { return device_buffers(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;
    bool start() override;
    bool stop() override;

private:
    struct frame_in_flight {
        int channels;
        uint64_t call; // the work() call that submitted it
    };

    int items_in_flight() const;
    bool inputs_ended() const;
    bool single_mapped_inputs() const;
    /// Submits frames for `channels` channels that start `first_item` items into
    /// this call's windows, split at noise_var tags and into frames of at most
    /// d_frame_channels.
    void submit(const gr_complex* H,
                const gr_complex* y,
                float* llr,
                int first_item,
                int channels);
    /// Collects frames in order (those of earlier calls, or every one when
    /// `all`), records their erasures; returns the items they cover, stopping
    /// at a failed frame.
    int collect(bool all);
    void rebuild_pipeline();
    /// device_buffers: H, y and the LLRs are in device memory (or, next to
    /// ordinary readers, page-locked host memory the GPU reaches): detected on
    /// the block's stream, finished before work() returns.
    int device_work(int channels, const gr_complex* H, const gr_complex* y, float* llr);

    std::unique_ptr<::mimo_gpu::detector> d_core; // parameters, shape, capabilities
    std::unique_ptr<::mimo_gpu::detector_pipeline> d_pipeline;  // host buffers
    std::unique_ptr<::mimo_gpu::device_stream> d_device_stream; // device buffers
    device_staging<gr_complex> d_H_staging, d_y_staging;        // pageable inputs
    const int d_symbols_per_channel;
    const int d_frame_channels;
    batch_gate d_gate;                       // in received vectors
    std::deque<frame_in_flight> d_in_flight; // oldest first
    uint64_t d_calls = 0;
    bool d_failed = false; // a core call failed: the stream ends
    std::atomic<bool> d_parameters_changed{ false }; // read by forecast() unlocked
    mutable gr::thread::mutex
        d_mutex; // guards N0, the parameters and the gate's wait, set from other threads
    float d_noise_var;
    erasure_log d_erasures;
    rate_limited_warning d_ignored_noise_var;
    work_trace d_trace{ "mimo_detector" };
};

} // namespace mimo_gpu
} // namespace gr

#endif
