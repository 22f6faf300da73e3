/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_IMPL_H

#include "plumbing/device_output_guard.h"
#include "plumbing/host_buffer_locks.h"

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/ofdm_channel_model.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/cuda_multipath_channel.h>
#include <mimo_gpu/multipath_channel.h>

#include <memory>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// A whole frame per run of the channel; on CUDA every frame of a call in one
/// batch (cuda_multipath_channel), on the CPU frame by frame.
class ofdm_channel_model_impl : public ofdm_channel_model, public device_stream_reader
{
public:
    /// gpu: the CUDA channel (else the CPU one); device_buffers only with it.
    ofdm_channel_model_impl(int frame_samples,
                            const ::mimo_gpu::multipath_config& config,
                            bool gpu,
                            bool device_buffers);
    void set_snr_db(double snr_db) override;
    double snr_db() const override;
    std::string active_backend() const override { return d_gpu ? "cuda" : "cpu"; }
    bool device_buffers() const override { return d_device_outputs; }
    bool reads_device_memory() const override { return d_gpu != nullptr; }
    bool start() override;
    bool stop() override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    ::mimo_gpu::multipath_channel& model();
    const ::mimo_gpu::multipath_channel& model() const;
    void run_on_cpu(int frames,
                    gr_vector_const_void_star& input_items,
                    gr_vector_void_star& output_items);

    const int d_frame;  // input samples per frame and antenna
    const int d_output; // output samples per frame and antenna
    mutable gr::thread::mutex d_mutex;
    std::unique_ptr<::mimo_gpu::multipath_channel> d_cpu;
    std::unique_ptr<::mimo_gpu::cuda_multipath_channel> d_gpu;
    const bool d_device_outputs;
    device_output_guard d_output_guard;
    host_buffer_locks d_locks; // host buffers page-locked in place (CUDA)
    bool d_buffers_checked = false;
    bool d_failed = false;
    std::vector<gr_complex> d_in, d_out; // CPU: antenna-interleaved
};

} // namespace mimo_gpu
} // namespace gr

#endif
