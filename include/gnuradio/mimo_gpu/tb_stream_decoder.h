/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_STREAM_DECODER_H
#define INCLUDED_MIMO_GPU_TB_STREAM_DECODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Transport-block decoder on a stream, LTE turbo or NR LDPC: a
 * detector's LLRs in, the decoded information bits out, one item per
 * transport block.
 * \ingroup mimo_gpu
 *
 * Input 0: LLRs (float, vlen llrs_per_item: the detector's nt*Q), positive
 * means bit 0; every G of them, from the start of the stream, are one
 * transport block. Output 0: its A decoded bits (bytes 0/1, vlen A). A block
 * whose CRC fails gets a "crc_ok" tag (False) on its item and is counted.
 * De-rate-matching, decoding, desegmentation and the CRCs run in one batch of
 * up to max_blocks transport blocks per call: code "turbo" is 36.212's chain
 * (tb_decoder's core), "ldpc" 38.212's (nr_tb_decoder's core: layered
 * LDPC decoding, offset min-sum by default).
 *
 * With device_buffers (the default, on CUDA) the LLRs are read where the
 * detector left them (GPU memory with its device_buffers) and the bits stay in
 * GPU memory: the detector -> decoder -> error counter chain does not cross
 * PCIe (an ordinary block downstream reads a host copy). Non-finite
 * LLRs fail their transport block (logged), not the stream. LLRs left at the
 * end of the stream that make no whole block are counted (dropped_llrs).
 */
class MIMO_GPU_API tb_stream_decoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<tb_stream_decoder> sptr;

    /*!
     * \param A, G, Qm, NL, rv the transport block format, as tb_encoder's
     *        (code "turbo") or nr_tb_encoder's (code "ldpc")
     * \param llrs_per_item LLRs per input item (G a multiple of it)
     * \param algorithm "" (the code's default), turbo: "max-log-map" or
     *        "log-map"; ldpc: "offset-min-sum", "normalized-min-sum" or "sum-product"
     * \param iterations most iterations per code block; 0 (the default): the
     *        code's default, 6 (turbo) or 10 (ldpc)
     * \param extrinsic_scale max-log-MAP extrinsic scaling, (0, 1] (turbo only)
     * \param window trellis stages per parallel window (turbo only)
     * \param backend "auto", "cpu" or "cuda"
     * \param max_blocks most transport blocks per decoder call; 0 (the default):
     *        chosen from G, up to about 2^22 LLRs a call (at most 256 blocks, at
     *        least one: three NR 100 MHz 4x4 16-QAM frames' blocks of 1.36 M LLRs)
     * \param device_buffers on CUDA, input and output in GPU memory (the
     *        default); False: host buffers on either backend
     * \param code "turbo" (LTE, the default) or "ldpc" (NR)
     */
    static sptr make(int A,
                     int G,
                     int Qm,
                     int NL,
                     int rv,
                     int llrs_per_item,
                     const std::string& algorithm = "",
                     int iterations = 0,
                     double extrinsic_scale = 0.75,
                     int window = 64,
                     const std::string& backend = "auto",
                     int max_blocks = 0,
                     bool device_buffers = true,
                     const std::string& code = "turbo");

    virtual void set_rv(int rv) = 0;
    virtual int rv() const = 0;
    virtual std::string active_backend() const = 0;
    virtual bool device_buffers() const = 0;
    /// "turbo" or "ldpc".
    virtual std::string code() const = 0;
    /// Transport blocks per decoder call at most (make's max_blocks, or the one chosen).
    virtual int max_blocks() const = 0;
    /// Transport blocks decoded so far, and those whose CRC failed.
    virtual uint64_t blocks() const = 0;
    virtual uint64_t crc_failures() const = 0;
    /// LLRs at the end of the stream that made no whole transport block.
    virtual uint64_t dropped_llrs() const = 0;
    /// Fewer than max_blocks wait at most this long for more. The default, 0,
    /// decodes whatever whole blocks wait at once: a batch grows by itself
    /// while the decoder is busy, and a live stream's blocks never wait.
    virtual void set_max_wait_ms(double ms) = 0;
    virtual double max_wait_ms() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
