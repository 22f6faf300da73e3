/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_TX_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_TX_IMPL_H

#include <gnuradio/mimo_gpu/ofdm_tx.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <vector>

namespace gr {
namespace mimo_gpu {

class ofdm_tx_impl : public ofdm_tx
{
public:
    explicit ofdm_tx_impl(const ::mimo_gpu::ofdm_grid& grid);
    int frame_bits() const override { return int(d_transmitter.grid().frame_bits()); }
    int frame_samples() const override { return d_transmitter.grid().frame_samples(); }
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    ::mimo_gpu::ofdm_transmitter d_transmitter;
    std::vector<gr_complex> d_frame; // antenna-interleaved
};

} // namespace mimo_gpu
} // namespace gr

#endif
