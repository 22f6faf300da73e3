/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NWAY_RECEIVER_IMPL_H
#define INCLUDED_MIMO_GPU_NWAY_RECEIVER_IMPL_H

#include <gnuradio/mimo_gpu/nway_detector.h>
#include <gnuradio/mimo_gpu/nway_receiver.h>
#include <gnuradio/mimo_gpu/qr_decomposition.h>

namespace gr {
namespace mimo_gpu {

class nway_receiver_impl : public nway_receiver
{
public:
    nway_receiver_impl(int nr,
                       int nt,
                       const std::string& modulation,
                       int passes,
                       double noise_var,
                       double llr_clip,
                       const std::string& backend,
                       int max_batch);

    void set_noise_var(double noise_var) override;
    void set_llr_clip(double llr_clip) override;

private:
    nway_detector::sptr d_detector; // made first: it checks every parameter
    qr_decomposition::sptr d_qr;
};

} // namespace mimo_gpu
} // namespace gr

#endif
