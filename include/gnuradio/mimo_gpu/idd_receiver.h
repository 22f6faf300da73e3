/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_IDD_RECEIVER_H
#define INCLUDED_MIMO_GPU_IDD_RECEIVER_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Iterative detection and decoding: H and y in, decoded transport blocks
 * out; a detector that takes a-priori LLRs and a transport-block decoder (LTE
 * turbo, or NR LDPC with code "ldpc") exchange extrinsic LLRs for up to
 * outer_iterations passes.
 * \ingroup mimo_gpu
 *
 * Input 0: channel matrices H (gr_complex, vlen nr*nt, row-major), one per
 * symbols_per_channel (S) received vectors. Input 1: received vectors y
 * (gr_complex, vlen nr); every G / (nt*Q) of them, from the start of the
 * stream, carry one transport block's G coded bits (rate matched for
 * NL = min(nt, 4) layers, the bits in order over the streams), and a
 * transport block must be whole channels (G / (nt*Q) a multiple of S).
 * Output 0: its A decoded bits (bytes 0/1, vlen A). Every output item gets an
 * "idd_iterations" tag (long: the passes it took; it stops early once every
 * block of a call passes its CRC); a block whose CRC fails also gets
 * "crc_ok" (False) and is counted.
 *
 * A "noise_var" tag on y sets N0 from the transport block it falls in (at its
 * first received vector) or the next one. Received vectors with non-finite or
 * rank-deficient H, non-finite y are erased (LLRs 0): their transport block
 * fails its CRC, the stream goes on. Received vectors at the end of the
 * stream that make no whole transport block are counted (dropped_vectors()).
 */
class MIMO_GPU_API idd_receiver : virtual public gr::block
{
public:
    typedef std::shared_ptr<idd_receiver> sptr;

    /*!
     * \param algorithm a registered family that takes a-priori LLRs (mmse,
     *        kbest, ml, sumis)
     * \param parameters the family's parameters, "name=value" separated by commas
     * \param A, G, rv the transport block format (Qm from the modulation,
     *        NL = min(nt, 4); G a multiple of nt * Qm)
     * \param outer_iterations detector-decoder passes, 1..16
     * \param turbo_iterations the decoder's iterations per pass: turbo 1..32,
     *        LDPC (layered) 1..100
     * \param code "turbo" (LTE 36.212, the default) or "ldpc" (NR 38.212:
     *        offset min-sum)
     * \param noise_var N0 (> 0) until a noise_var tag says otherwise
     * \param symbols_per_channel S: received vectors per H item (>= 1)
     * \param backend auto, cpu or cuda (detector and decoder)
     * \param max_blocks most transport blocks per call, >= 1
     */
    static sptr make(const std::string& algorithm,
                     int nr,
                     int nt,
                     const std::string& modulation,
                     int A,
                     int G,
                     const std::string& parameters = "",
                     int rv = 0,
                     int outer_iterations = 3,
                     int turbo_iterations = 6,
                     double noise_var = 1.0,
                     int symbols_per_channel = 1,
                     const std::string& backend = "auto",
                     int max_blocks = 32,
                     const std::string& code = "turbo");

    virtual std::string algorithm() const = 0;
    virtual std::string active_backend() const = 0;
    virtual int outer_iterations() const = 0;
    virtual void set_outer_iterations(int outer_iterations) = 0;
    virtual void set_noise_var(double noise_var) = 0;
    virtual double noise_var() const = 0;
    /// Transport blocks decoded so far, those whose CRC24A failed, and the
    /// passes they took in all.
    virtual uint64_t blocks() const = 0;
    virtual uint64_t crc_failures() const = 0;
    virtual uint64_t passes() const = 0;
    /// Received vectors at the end of the stream that made no whole transport block.
    virtual uint64_t dropped_vectors() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
