/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_IMPL_H

#include <gnuradio/mimo_gpu/ofdm_channel_model.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/multipath_channel.h>

#include <vector>

namespace gr {
namespace mimo_gpu {

class ofdm_channel_model_impl : public ofdm_channel_model
{
public:
    ofdm_channel_model_impl(int frame_samples,
                            const ::mimo_gpu::multipath_config& config);
    void set_snr_db(double snr_db) override;
    double snr_db() const override;
    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    const int d_frame;  // input samples per frame and antenna
    const int d_output; // output samples per frame and antenna
    mutable gr::thread::mutex d_mutex;
    ::mimo_gpu::multipath_channel d_channel;
    std::vector<gr_complex> d_in, d_out; // antenna-interleaved
};

} // namespace mimo_gpu
} // namespace gr

#endif
