/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_tx_impl.h"
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>

#include <stdexcept>

namespace gr {
namespace mimo_gpu {

ofdm_tx::sptr ofdm_tx::make(const std::string& grid,
                            int nt,
                            const std::string& modulation,
                            int slots,
                            int data_symbols)
{
    return gnuradio::make_block_sptr<ofdm_tx_impl>(
        ofdm_frame(grid, nt, modulation, slots, data_symbols));
}

ofdm_tx_impl::ofdm_tx_impl(const ::mimo_gpu::ofdm_grid& grid)
    : gr::sync_interpolator(
          "ofdm_tx",
          gr::io_signature::make(1, 1, grid.frame_bits() * sizeof(uint8_t)),
          gr::io_signature::make(grid.nt, grid.nt, sizeof(gr_complex)),
          unsigned(grid.frame_samples())),
      d_transmitter(grid),
      d_frame(size_t(grid.frame_samples()) * grid.nt)
{
    d_logger->info("{}: {} coded bits -> {} samples per frame",
                   ::mimo_gpu::describe(grid),
                   grid.frame_bits(),
                   grid.frame_samples());
}

int ofdm_tx_impl::work(int noutput_items,
                       gr_vector_const_void_star& input_items,
                       gr_vector_void_star& output_items)
{
    const int S = frame_samples(), nt = d_transmitter.grid().nt;
    const int frames = noutput_items / S;
    const auto bits = static_cast<const uint8_t*>(input_items[0]);
    for (int f = 0; f < frames; ++f) {
        try {
            d_transmitter.modulate(bits + size_t(f) * size_t(frame_bits()),
                                   d_frame.data());
        } catch (const std::invalid_argument& e) {
            throw std::runtime_error(std::string("ofdm_tx: frame ") +
                                     std::to_string(nitems_read(0) + f) + ": " +
                                     e.what());
        }
        for (int t = 0; t < nt; ++t) {
            auto out = static_cast<gr_complex*>(output_items[t]) + size_t(f) * S;
            for (int n = 0; n < S; ++n)
                out[n] = d_frame[size_t(n) * nt + t];
        }
    }
    return frames * S;
}

} // namespace mimo_gpu
} // namespace gr
