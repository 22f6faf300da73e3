/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_ML_DETECTOR_H
#define INCLUDED_MIMO_GPU_ML_DETECTOR_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_block.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Exhaustive max-log ML soft detector: (H, y) in, LLRs out (the exact reference).
 * \ingroup mimo_gpu
 *
 * Input 0: H (gr_complex, vlen nr*nt); input 1: y (gr_complex, vlen nr).
 * Output 0: LLRs (float, vlen nt*Q). Refuses M^nt > 2^24 candidates.
 * A "noise_var" tag on input 1 sets N0 from that item on.
 */
class MIMO_GPU_API ml_detector : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<ml_detector> sptr;

    static sptr make(int nr,
                     int nt,
                     const std::string& modulation,
                     double noise_var,
                     const std::string& backend = "auto",
                     int max_batch = 8400);

    virtual void set_noise_var(double noise_var) = 0;
    virtual double noise_var() const = 0;
    virtual std::string active_backend() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
