/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NR_TB_DECODER_H
#define INCLUDED_MIMO_GPU_NR_TB_DECODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief 5G NR transport block decoder (TS 38.212: de-interleaving,
 * de-rate-matching, layered LDPC decoding, desegmentation, CRC24B and the
 * transport block CRC), on PDUs, with HARQ soft combining.
 * \ingroup mimo_gpu
 *
 * Message port "in": PDU (meta, f32vector of G LLRs, positive means 0).
 * Message port "out": PDU (meta plus "crc_ok" (bool: the transport block CRC
 * and every code block CRC passed, every code block had information),
 * "code_blocks", "code_blocks_crc_ok", "code_blocks_no_information" and
 * "iterations" (the most any code block used), u8vector of A decoded bits).
 *
 * HARQ: a PDU whose meta holds "harq_process" (an integer >= 0) is combined
 * with the earlier transmissions of that process (the block keeps a soft
 * buffer per process: incremental redundancy, Chase combining for a repeated
 * rv); "rv" (0..3) in the meta sets the PDU's redundancy version (else the
 * block's); "new_data" (True) starts the process afresh. A process's buffer
 * is cleared once its transport block passes. PDUs without a process decode
 * from their own LLRs, all waiting ones of one rv in one batch.
 * A PDU of another length or type, with a non-finite LLR, or with a bad
 * "harq_process" or "rv", is logged as an error and dropped.
 */
class MIMO_GPU_API nr_tb_decoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<nr_tb_decoder> sptr;

    /*!
     * \param A, G, Qm, NL, rv, base_graph the format, as nr_tb_encoder's
     * \param algorithm "offset-min-sum" (offset 0.5), "normalized-min-sum"
     *        (scale 0.75) or "sum-product"
     * \param iterations most layered iterations, 1..100
     * \param backend "auto", "cpu" or "cuda"
     * \param max_blocks most transport blocks per decoder call
     */
    static sptr make(int A,
                     int G,
                     int Qm,
                     int NL = 1,
                     int rv = 0,
                     int base_graph = 0,
                     const std::string& algorithm = "offset-min-sum",
                     int iterations = 10,
                     const std::string& backend = "auto",
                     int max_blocks = 64);

    virtual void set_rv(int rv) = 0;
    virtual int rv() const = 0;
    virtual std::string active_backend() const = 0;
    /// Transport blocks decoded, and those whose CRC failed.
    virtual uint64_t blocks() const = 0;
    virtual uint64_t crc_failures() const = 0;
    /// HARQ processes holding a soft buffer.
    virtual int harq_processes() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
