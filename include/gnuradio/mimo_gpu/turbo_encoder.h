/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TURBO_ENCODER_H
#define INCLUDED_MIMO_GPU_TURBO_ENCODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief LTE turbo encoder (TS 36.212 5.1.3.2), one code block at a time.
 * \ingroup mimo_gpu
 *
 * Input 0: bits (bytes 0/1). Output 0: coded bits (bytes 0/1), 3(K+4) per
 * code block, as [d0 | d1 | d2] (K+4 each, the 12 tail bits of 5.1.3.2.2
 * included).
 *
 * Without a length tag key, every K input bits are one code block (a partial
 * block at the end of the stream is not encoded). With a key, each tagged
 * packet is one code block whose K is its length (a table K <= the K given
 * here); its output packet of 3(K+4) bits carries the same key. A packet of
 * another length is logged as an error and dropped.
 */
class MIMO_GPU_API turbo_encoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<turbo_encoder> sptr;

    /*!
     * \param K code block size (a size of table 5.1.3-3, 40..6144); with a
     *          length tag key, the largest K of the packets (sizes the buffers)
     * \param length_tag_key "" for a plain stream of K-bit blocks, else the key
     *          of the packet length tags
     */
    static sptr make(int K, const std::string& length_tag_key = "");

    virtual int K() const = 0;
    virtual std::string length_tag_key() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
