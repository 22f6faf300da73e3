/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NWAY_RECEIVER_H
#define INCLUDED_MIMO_GPU_NWAY_RECEIVER_H

#include <gnuradio/hier_block2.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Convenience hierarchy (H, y) -> LLR: qr_decomposition followed by nway_detector.
 * \ingroup mimo_gpu
 */
class MIMO_GPU_API nway_receiver : virtual public gr::hier_block2
{
public:
    typedef std::shared_ptr<nway_receiver> sptr;

    static sptr make(int nr,
                     int nt,
                     const std::string& modulation,
                     int passes,
                     double noise_var,
                     double llr_clip = 0.0,
                     const std::string& backend = "auto",
                     int max_batch = 8400);

    virtual void set_noise_var(double noise_var) = 0;
    virtual void set_llr_clip(double llr_clip) = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
