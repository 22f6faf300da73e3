/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_SOURCE_H
#define INCLUDED_MIMO_GPU_TB_SOURCE_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Simulation source of transport blocks: random information bits
 * through the whole transmit chain of LTE (code "turbo": CRC24A, segmentation,
 * turbo coding and rate matching, 36.212) or NR (code "ldpc": 38.212's CRC,
 * segmentation, LDPC coding and rate matching), one item per transport block
 * on each output.
 * \ingroup mimo_gpu
 *
 * Output 0: the G coded bits of a transport block (bytes 0/1, vlen G), for a
 * channel (mimo_channel_source's bits input). Output 1: its A information bits
 * (bytes 0/1, vlen A), for an error counter behind the decoder.
 *
 * The blocks are drawn and encoded once, when the block is made: the stream
 * cycles through `pool` distinct transport blocks (seeded), so that a GPU
 * chain is not held back by a CPU encoder. The channel and noise downstream
 * are fresh for every block, so error rates are those of fresh blocks (the
 * code is linear and the mapping symmetric); a pool of 1 repeats one block.
 * On CUDA with device_buffers the pool lives in GPU memory and the outputs are
 * device buffers: the coded bits go to a GPU channel without crossing PCIe.
 */
class MIMO_GPU_API tb_source : virtual public gr::block
{
public:
    typedef std::shared_ptr<tb_source> sptr;

    /*!
     * \param A, G, Qm, NL, rv the transport block format, as tb_encoder's
     *        (turbo) or nr_tb_encoder's (ldpc)
     * \param seed the information bits' seed
     * \param pool distinct transport blocks, cycled (>= 1)
     * \param blocks transport blocks to send before the stream ends (0: endless)
     * \param backend "auto", "cpu" or "cuda": where the pool lives
     * \param device_buffers on CUDA, outputs in GPU memory (the default)
     * \param code "turbo" (LTE, the default) or "ldpc" (NR)
     */
    static sptr make(int A,
                     int G,
                     int Qm,
                     int NL = 1,
                     int rv = 0,
                     uint64_t seed = 0,
                     int pool = 64,
                     uint64_t blocks = 0,
                     const std::string& backend = "auto",
                     bool device_buffers = true,
                     const std::string& code = "turbo");

    virtual std::string active_backend() const = 0;
    virtual bool device_buffers() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
