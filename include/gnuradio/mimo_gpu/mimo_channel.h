/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_CHANNEL_H
#define INCLUDED_MIMO_GPU_MIMO_CHANNEL_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Simulated MIMO channel: bits in, (H, y) out, for loopback tests and simulations.
 * \ingroup mimo_gpu
 *
 * Input 0: bytes holding one bit each (0/1), vlen nt*Q (stream t's bits at [t*Q, t*Q+Q)).
 * Output 0: H, gr_complex, vlen nr*nt (row-major, i.i.d. CN(0,1) entries), one
 * item per symbols_per_channel (S) input items: S consecutive problems share a
 * channel (block fading, e.g. a subcarrier over the S OFDM symbols of a frame),
 * which is what mimo_detector's symbols_per_channel takes.
 * Output 1: y = H s + n, gr_complex, vlen nr, one item per input item,
 * n ~ CN(0, N0 I), N0 = 10^(-snr_db/10).
 * A "noise_var" tag (double N0) is put on both outputs at the first item and
 * after every SNR change (at a channel boundary), so downstream detectors follow
 * the SNR. Input items at the end of the stream that do not fill a channel of S
 * are not simulated (an error message says how many).
 * With S = 1 (the default) there is one H item per problem, and a seed gives the
 * stream it always gave.
 */
class MIMO_GPU_API mimo_channel : virtual public gr::block
{
public:
    typedef std::shared_ptr<mimo_channel> sptr;

    /*!
     * \param nr receive antennas, \param nt streams (1 <= nt <= nr <= 1024; each
     *        detector states the shapes it takes: the small-MIMO ones nr <= 8,
     *        mmse / mmse_cg up to 256 x 32)
     * \param modulation "qpsk", "16qam", "64qam", "256qam" or "1024qam"
     * \param snr_db Es/N0 per receive antenna in dB
     * \param seed seed of the channel and noise generator
     * \param symbols_per_channel S >= 1: consecutive problems sharing one H item
     */
    static sptr make(int nr,
                     int nt,
                     const std::string& modulation,
                     double snr_db,
                     uint64_t seed,
                     int symbols_per_channel = 1);

    virtual void set_snr_db(double snr_db) = 0;
    virtual double snr_db() const = 0;
    virtual double noise_var() const = 0;
    virtual int symbols_per_channel() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif /* INCLUDED_MIMO_GPU_MIMO_CHANNEL_H */
