/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_CHANNEL_SOURCE_IMPL_H
#define INCLUDED_MIMO_GPU_MIMO_CHANNEL_SOURCE_IMPL_H

#include "plumbing/device_staging.h"

#include "plumbing/device_output_guard.h"

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/mimo_channel_source.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/device_memory.h>

#include <memory>

namespace gr {
namespace mimo_gpu {

class mimo_channel_source_impl : public mimo_channel_source, public device_stream_reader
{
public:
    mimo_channel_source_impl(std::unique_ptr<::mimo_gpu::channel_generator> generator,
                             double snr_db,
                             uint64_t problems,
                             int max_batch,
                             bool device_buffers,
                             int bits_per_input_item);

    void set_snr_db(double snr_db) override;
    double snr_db() const override;
    double noise_var() const override;
    std::string active_backend() const override;
    bool reads_device_memory() const override { return d_stream != nullptr; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    bool check_topology(int ninputs, int noutputs) override;

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    std::unique_ptr<::mimo_gpu::channel_generator> d_generator;
    std::unique_ptr<::mimo_gpu::device_stream> d_stream; // CUDA: device buffers
    const uint64_t d_channels;                           // 0: endless
    const int d_problems_per_input_item;                 // of the optional bits input
    const int d_unit_channels; // channels that take whole input items: lcm(S, that) / S
    const int d_max_channels;  // per work() call, a multiple of d_unit_channels
    device_staging<uint8_t> d_given_staging; // pageable bits input, device buffers
    mutable gr::thread::mutex d_mutex;       // guards the SNR
    double d_snr_db;
    float d_noise_var;
    bool d_tag_pending = true;
    device_output_guard d_output_guard;
};

} // namespace mimo_gpu
} // namespace gr

#endif
