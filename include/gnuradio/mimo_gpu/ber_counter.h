/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_BER_COUNTER_H
#define INCLUDED_MIMO_GPU_BER_COUNTER_H

#include <gnuradio/mimo_gpu/api.h>

#include <gnuradio/sync_block.h>
#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Counts bit errors of LLR hard decisions against the transmitted bits.
 * \ingroup mimo_gpu
 *
 * Input 0: transmitted bits (bytes 0/1, vlen bits_per_item).
 * Input 1: the decisions, vlen bits_per_item: LLRs (float; decision is 1
 * when LLR < 0) with decisions "llr", or hard bits (bytes, non-zero is 1; a
 * decoder's output, e.g. a transport block per item) with "hard".
 * Besides bit errors it counts items with at least one error (block errors
 * when an item is a transport block).
 * With device_buffers (CUDA) both inputs are GPU memory and the errors are
 * counted on the GPU, so a device-resident chain ends here without copying
 * its bits and LLRs to the host.
 */
class MIMO_GPU_API ber_counter : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<ber_counter> sptr;

    static sptr make(int bits_per_item,
                     bool device_buffers = false,
                     const std::string& decisions = "llr");

    virtual uint64_t bits() const = 0;
    virtual uint64_t errors() const = 0;
    virtual double ber() const = 0; ///< errors/bits, 0 before any bit
    virtual uint64_t items() const = 0;
    virtual uint64_t item_errors() const = 0; ///< items with at least one bit error
    virtual void reset() = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
