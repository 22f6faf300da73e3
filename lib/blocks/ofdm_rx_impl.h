/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_RX_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_RX_IMPL_H

#include <gnuradio/mimo_gpu/ofdm_rx.h>
#include <mimo_gpu/ofdm_receiver.h>

#include <vector>

namespace gr {
namespace mimo_gpu {

class ofdm_rx_impl : public ofdm_rx
{
public:
    ofdm_rx_impl(const ::mimo_gpu::ofdm_grid& grid, const ::mimo_gpu::ofdm_receiver_config& config);

    int symbols_per_channel() const override { return d_symbols_per_channel; }
    uint64_t frames_received() const override { return d_frames; }
    uint64_t samples_dropped() const override { return d_dropped; }
    double last_noise_var() const override { return d_last_n0; }
    double last_cfo() const override { return d_last_cfo; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;
    bool stop() override;

private:
    bool upstream_done() const; ///< every input's upstream has finished
    void emit_tags(const ::mimo_gpu::front_end_frame& f, uint64_t H_item, uint64_t y_item, uint64_t first_sample);

    ::mimo_gpu::ofdm_receiver d_receiver;
    const int d_frame;              // samples per frame and antenna
    const int d_y_per_frame;        // y items per frame
    const int d_H_per_frame;        // H items per frame
    const int d_symbols_per_channel;
    std::vector<gr_complex> d_samples; // antenna-interleaved copy of the inputs
    uint64_t d_frames = 0, d_dropped = 0;
    double d_last_n0 = 0, d_last_cfo = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
