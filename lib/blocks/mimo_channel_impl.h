/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_CHANNEL_IMPL_H
#define INCLUDED_MIMO_GPU_MIMO_CHANNEL_IMPL_H

#include <gnuradio/mimo_gpu/mimo_channel.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/channel_simulator.h>

#include "plumbing/batch_runner.h"

namespace gr {
namespace mimo_gpu {

class mimo_channel_impl : public mimo_channel
{
public:
    mimo_channel_impl(int nr,
                      int nt,
                      const std::string& modulation,
                      double snr_db,
                      uint64_t seed,
                      int symbols_per_channel);

    void set_snr_db(double snr_db) override;
    double snr_db() const override;
    double noise_var() const override;
    int symbols_per_channel() const override { return d_symbols_per_channel; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;
    bool stop() override;

private:
    ::mimo_gpu::channel_simulator d_simulator;
    const int d_symbols_per_channel;
    batch_runner d_batches;            // in channels
    mutable gr::thread::mutex d_mutex; // guards the SNR, changed from other threads
    double d_snr_db;
    float d_noise_var;
    bool d_tag_pending = true; // a noise_var tag is due at the next output item
};

} // namespace mimo_gpu
} // namespace gr

#endif
