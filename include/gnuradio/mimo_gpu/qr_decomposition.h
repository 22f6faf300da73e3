/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_QR_DECOMPOSITION_H
#define INCLUDED_MIMO_GPU_QR_DECOMPOSITION_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_block.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Batched MGS QR of the real-valued MIMO model for `orders` detection orders.
 * \ingroup mimo_gpu
 *
 * Input 0: H (gr_complex, vlen nr*nt); input 1: y (gr_complex, vlen nr).
 * Output 0: QR items (float, vlen orders*2nt*(2nt+1)), layout of mimo_gpu::qr_layout.
 * Runs on the GPU when one is usable (backend "auto"), else on the CPU.
 * A problem with a NaN/Inf in H or y, or a rank-deficient H, gets an item of
 * NaNs (nway_detector erases it) and an "erasure" tag under the default policy
 * "erase"; policy "stop" ends the stream there instead.
 */
class MIMO_GPU_API qr_decomposition : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<qr_decomposition> sptr;

    /*!
     * \param backend "auto", "cpu" or "cuda"
     * \param max_batch most problems handed to the core per call
     * \param policy what a bad problem does: "erase" or "stop"
     */
    static sptr make(int nr,
                     int nt,
                     int orders,
                     const std::string& backend = "auto",
                     int max_batch = 8400,
                     const std::string& policy = "erase");

    virtual std::string active_backend() const = 0;
    /// Problems erased so far, exact.
    virtual uint64_t erased_problems() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
