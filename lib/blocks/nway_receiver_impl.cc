/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "block_parameters.h"
#include "nway_receiver_impl.h"

#include <gnuradio/io_signature.h>

namespace gr {
namespace mimo_gpu {

nway_receiver::sptr nway_receiver::make(int nr,
                                        int nt,
                                        const std::string& modulation,
                                        int passes,
                                        double noise_var,
                                        double llr_clip,
                                        const std::string& backend,
                                        int max_batch)
{
    return gnuradio::make_block_sptr<nway_receiver_impl>(
        nr, nt, modulation, passes, noise_var, llr_clip, backend, max_batch);
}

nway_receiver_impl::nway_receiver_impl(int nr,
                                       int nt,
                                       const std::string& modulation,
                                       int passes,
                                       double noise_var,
                                       double llr_clip,
                                       const std::string& backend,
                                       int max_batch)
    : gr::hier_block2(
          "nway_receiver", channel_signature(nr, nt), llr_signature(nr, nt, modulation)),
      d_detector(nway_detector::make(
          nr, nt, modulation, passes, noise_var, llr_clip, backend, max_batch)),
      d_qr(qr_decomposition::make(nr, nt, passes, backend, max_batch))
{
    connect(self(), 0, d_qr, 0);
    connect(self(), 1, d_qr, 1);
    connect(d_qr, 0, d_detector, 0); // noise_var tags on (H, y) pass through the QR
    connect(d_detector, 0, self(), 0);
}

void nway_receiver_impl::set_noise_var(double noise_var)
{
    d_detector->set_noise_var(noise_var);
}

void nway_receiver_impl::set_llr_clip(double llr_clip)
{
    d_detector->set_llr_clip(llr_clip);
}

} // namespace mimo_gpu
} // namespace gr
