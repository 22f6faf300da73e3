/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NR_TB_ENCODER_H
#define INCLUDED_MIMO_GPU_NR_TB_ENCODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief 5G NR transport block encoder (TS 38.212: CRC, base graph selection,
 * code block segmentation, LDPC encoding, rate matching), on PDUs.
 * \ingroup mimo_gpu
 *
 * Message port "in": PDU (meta, u8vector of A bits 0/1). Message port "out":
 * PDU (the same meta, u8vector of G coded bits). A PDU of another length or
 * type is logged as an error and dropped.
 */
class MIMO_GPU_API nr_tb_encoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<nr_tb_encoder> sptr;

    /*!
     * \param A, G transport block and coded bits
     * \param Qm bits per symbol (1, 2, 4, 6, 8, 10), NL layers (1..4)
     * \param rv redundancy version 0..3
     * \param base_graph 0: chosen by 38.212 7.2.2 from A and A/G; 1 or 2
     */
    static sptr make(int A, int G, int Qm, int NL = 1, int rv = 0, int base_graph = 0);

    virtual void set_rv(int rv) = 0;
    virtual int rv() const = 0;
    /// The code blocks (C) and lifting size (Zc) chosen for the format.
    virtual int code_blocks() const = 0;
    virtual int lifting_size() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
