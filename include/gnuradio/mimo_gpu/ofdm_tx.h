/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_TX_H
#define INCLUDED_MIMO_GPU_OFDM_TX_H

#include <gnuradio/mimo_gpu/api.h>
#include <gnuradio/sync_interpolator.h>

#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief MIMO-OFDM transmitter: one frame's coded bits in, nt antenna sample streams out.
 * \ingroup mimo_gpu
 *
 * Input: bytes holding one bit each (0/1), one item = one frame's coded bits
 * (vlen frame_bits(): slots x used subcarriers x data symbols x nt x Q, in the
 * resource-element order of docs/front_end.md, e.g. a transport block's G bits).
 * Outputs: nt complex streams, frame_samples() samples per input item: the
 * preamble, then per slot a pilot symbol (each antenna on its own comb) and the
 * data symbols, each with its cyclic prefix.
 *
 * On CUDA the frames are mapped, transformed and cut on the GPU in batches (the
 * bits read where they are: a GPU tb_source's device buffer stays on the GPU),
 * and with device_buffers the antenna streams stay in GPU memory for a GPU
 * reader (ofdm_channel_model on CUDA); ordinary readers get host copies. A
 * frame whose bits are not all 0 or 1 ends the stream with a logged error.
 */
class MIMO_GPU_API ofdm_tx : virtual public gr::sync_interpolator
{
public:
    typedef std::shared_ptr<ofdm_tx> sptr;

    /*!
     * \param grid preset: lte1.4, lte3, lte5, lte10, lte15, lte20, nr20, nr40, nr100
     * \param nt transmit antennas (1..8)
     * \param modulation qpsk, 16qam, 64qam, 256qam, 1024qam
     * \param slots slots per frame, \param data_symbols data symbols per slot
     * \param backend "auto", "cpu" or "cuda"
     * \param device_buffers on CUDA, the antenna streams in GPU memory (the default)
     * \param pilot_positions where each slot's pilot symbols sit among its
     *        pilot and data symbols (1 to 4, ascending; {0}: one, first), e.g.
     *        {3, 10} with 12 data symbols (docs/front_end.md, "Pilot layouts")
     */
    static sptr make(const std::string& grid = "lte1.4",
                     int nt = 2,
                     const std::string& modulation = "16qam",
                     int slots = 2,
                     int data_symbols = 6,
                     const std::string& backend = "auto",
                     bool device_buffers = true,
                     const std::vector<int>& pilot_positions = std::vector<int>{ 0 });

    virtual int frame_bits() const = 0;
    virtual int frame_samples() const = 0;
    virtual std::string active_backend() const = 0;
    /// Whether the antenna streams live in GPU memory (make's device_buffers, on CUDA).
    virtual bool device_buffers() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
