/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_DECODER_H
#define INCLUDED_MIMO_GPU_TB_DECODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief LTE transport block decoder: rate dematching, turbo decoding, code
 * block CRC24B and transport block CRC24A (TS 36.212 5.1), on PDUs, batched.
 * \ingroup mimo_gpu
 *
 * Message port "in": PDU (meta, f32vector of G LLRs, positive means 0).
 * Message port "out": PDU (meta plus "crc_ok" (bool: the CRC24A passed and
 * every code block had information behind it), "code_blocks",
 * "code_blocks_crc_ok", "code_blocks_no_information" (code blocks with fewer
 * non-zero LLRs than K after rate dematching, e.g. erased) and "iterations"
 * (the most any code block used), u8vector of A decoded bits). A failed CRC is
 * reported in crc_ok, the bits are still sent. A format whose G is too small
 * for A (a code block above rate 1) is refused with std::invalid_argument.
 *
 * The handler decodes every PDU waiting at "in" (up to max_blocks transport
 * blocks) in one batch: one GPU launch sequence for all their code blocks.
 * A PDU of another length or type, or with a non-finite LLR, is logged as an
 * error and dropped.
 */
class MIMO_GPU_API tb_decoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<tb_decoder> sptr;

    /*!
     * \param A, G, Qm, NL, rv the transport block format, as tb_encoder's
     * \param algorithm "max-log-map" or "log-map"
     * \param iterations most full iterations per code block, 1..32
     * \param extrinsic_scale max-log-MAP extrinsic scaling, (0, 1]
     * \param window trellis stages per parallel window
     * \param backend "auto", "cpu" or "cuda"
     * \param max_blocks most transport blocks per decoder call
     */
    static sptr make(int A,
                     int G,
                     int Qm,
                     int NL = 1,
                     int rv = 0,
                     const std::string& algorithm = "max-log-map",
                     int iterations = 6,
                     double extrinsic_scale = 0.75,
                     int window = 64,
                     const std::string& backend = "auto",
                     int max_blocks = 64);

    virtual void set_rv(int rv) = 0;
    virtual int rv() const = 0;
    virtual void set_iterations(int iterations) = 0;
    virtual int iterations() const = 0;
    virtual void set_extrinsic_scale(double extrinsic_scale) = 0;
    virtual double extrinsic_scale() const = 0;
    virtual std::string active_backend() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
