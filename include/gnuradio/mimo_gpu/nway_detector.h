/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NWAY_DETECTOR_H
#define INCLUDED_MIMO_GPU_NWAY_DETECTOR_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_block.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief N-way parallel SSFE soft detector: QR items in, LLRs out.
 * \ingroup mimo_gpu
 *
 * Input 0: QR items from qr_decomposition with orders = passes.
 * Output 0: LLRs (float, vlen nt*Q), positive means bit 0.
 * A "noise_var" tag on the input sets N0 from that item on.
 * An item holding a NaN or Inf (qr_decomposition's erased items are NaN) gets
 * LLRs 0 and an "erasure" tag under the default policy "erase"; policy "stop"
 * ends the stream there instead.
 */
class MIMO_GPU_API nway_detector : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<nway_detector> sptr;

    /*!
     * \param passes N search passes, 1..nt
     * \param noise_var N0 (> 0) until a noise_var tag says otherwise
     * \param llr_clip clip LLRs to +-llr_clip, and give a bit whose
     *        counter-hypothesis no candidate reached +-llr_clip; 0 disables
     *        clipping (such a bit then gets +-1000); the default 8 is what the
     *        turbo decoder does well with (docs/detectors.md)
     */
    static sptr make(int nr,
                     int nt,
                     const std::string& modulation,
                     int passes,
                     double noise_var,
                     double llr_clip = 8.0,
                     const std::string& backend = "auto",
                     int max_batch = 8400,
                     const std::string& policy = "erase");

    virtual void set_noise_var(double noise_var) = 0;
    virtual double noise_var() const = 0;
    virtual void set_llr_clip(double llr_clip) = 0;
    virtual double llr_clip() const = 0;
    virtual std::string active_backend() const = 0;
    /// Items erased so far, exact.
    virtual uint64_t erased_problems() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
