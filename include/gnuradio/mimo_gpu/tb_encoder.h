/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_ENCODER_H
#define INCLUDED_MIMO_GPU_TB_ENCODER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief LTE transport block encoder: CRC24A, code block segmentation (with
 * CRC24B), turbo coding and rate matching (TS 36.212 5.1.1 - 5.1.4.1), on PDUs.
 * \ingroup mimo_gpu
 *
 * Message port "in": PDU (meta, u8vector of A bits 0/1).
 * Message port "out": PDU (the same meta, u8vector of G coded bits 0/1).
 * A PDU of another length or type is logged as an error and dropped.
 */
class MIMO_GPU_API tb_encoder : virtual public gr::block
{
public:
    typedef std::shared_ptr<tb_encoder> sptr;

    /*!
     * \param A transport block bits
     * \param G coded bits (a multiple of NL*Qm)
     * \param Qm bits per modulation symbol: 1, 2, 4, 6, 8 or 10
     * \param NL layers
     * \param rv redundancy version, 0..3
     */
    static sptr make(int A, int G, int Qm, int NL = 1, int rv = 0);

    virtual void set_rv(int rv) = 0;
    virtual int rv() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
