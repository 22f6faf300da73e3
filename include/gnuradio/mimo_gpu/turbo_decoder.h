/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TURBO_DECODER_H
#define INCLUDED_MIMO_GPU_TURBO_DECODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief LTE turbo decoder (max-log-MAP or log-MAP, parallel windows), batched.
 * \ingroup mimo_gpu
 *
 * Input 0: LLRs (float, positive means 0), 3(K+4) per code block as
 * [d0 | d1 | d2] (the layout turbo_encoder writes). Output 0: K hard bits
 * (bytes 0/1) per code block.
 *
 * Without a length tag key, every 3(K+4) LLRs are one code block. With a key,
 * each tagged packet is one code block of K = length/3 - 4 (a table K <= the K
 * given here); its K output bits carry the same key. A packet of another
 * length, or with a non-finite LLR, is logged as an error and dropped. LLRs
 * with no length tag where a packet must start (e.g. before the first tag),
 * and a partial code block or packet left when the flowgraph stops, are
 * dropped with a warning naming how many; dropped_llrs() counts them all.
 * Finite LLRs are saturated to +-1e4 (mimo_gpu::k_turbo_llr_limit).
 *
 * Each call decodes all complete code blocks waiting at the input (up to
 * max_blocks) in one batch, so one GPU launch covers many blocks even when
 * they arrive one packet at a time.
 *
 * On the first output bit of each code block: an "iterations" tag (long, the
 * full iterations run) and, when crc is not "none", a "crc_ok" tag (bool: the
 * block's last CRC bits check; the decoder also stops iterating once they do).
 * A code block with fewer than K non-zero LLRs (e.g. erased, all zero) carries
 * no information: it gets a "no_information" tag (bool true) and crc_ok false.
 */
class MIMO_GPU_API turbo_decoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<turbo_decoder> sptr;

    /*!
     * \param K code block size (table 5.1.3-3); with a length tag key, the
     *          largest K of the packets (sizes the buffers)
     * \param length_tag_key "" for a plain stream, else the packet length key
     * \param algorithm "max-log-map" or "log-map"
     * \param iterations full iterations, 1..32
     * \param extrinsic_scale max-log-MAP extrinsic scaling, (0, 1]
     * \param window trellis stages per parallel window (>= K: one window)
     * \param crc "none", "crc24a", "crc24b", "crc16" or "crc8": the CRC that
     *          ends each code block (early termination and the crc_ok tag)
     * \param backend "auto", "cpu" or "cuda"
     * \param max_blocks most code blocks per decoder call
     */
    static sptr make(int K,
                     const std::string& length_tag_key = "",
                     const std::string& algorithm = "max-log-map",
                     int iterations = 6,
                     double extrinsic_scale = 0.75,
                     int window = 64,
                     const std::string& crc = "none",
                     const std::string& backend = "auto",
                     int max_blocks = 256);

    virtual int K() const = 0;
    virtual void set_iterations(int iterations) = 0;
    virtual int iterations() const = 0;
    virtual void set_extrinsic_scale(double extrinsic_scale) = 0;
    virtual double extrinsic_scale() const = 0;
    virtual std::string active_backend() const = 0;
    /// Input LLRs dropped so far without being decoded (bad or untagged packets,
    /// non-finite blocks, and, once stopped, a partial block left at the end).
    virtual uint64_t dropped_llrs() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
