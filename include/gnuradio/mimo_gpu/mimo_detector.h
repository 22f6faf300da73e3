/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMO_GPU_MIMO_DETECTOR_H
#define INCLUDED_MIMO_GPU_MIMO_DETECTOR_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>
#include <vector>

namespace mimo_gpu {
struct detector_spec; // <mimo_gpu/detector_registry.h>
}

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Soft MIMO detector of any registered family: H and y in, LLRs out.
 * \ingroup mimo_gpu
 *
 * Input 0: channel matrices H (gr_complex, vlen nr*nt, row-major), one per
 * symbols_per_channel (S) received vectors. Input 1: received vectors y
 * (gr_complex, vlen nr). Output 0: LLRs (float, vlen nt*Q), one item per y
 * item, positive means bit 0.
 * A "noise_var" tag on y sets N0 from the first symbol of the channel it falls in.
 *
 * A received vector whose H or y holds a NaN or Inf, or whose H is
 * rank-deficient, is erased under the default policy "erase": its LLRs are 0,
 * its output item gets an "erasure" tag (value: the cause), it is counted
 * (erased_problems()), and the stream goes on. Policy "stop" ends the stream
 * at the first one instead (for debugging).
 */
class MIMO_GPU_API mimo_detector : virtual public gr::block
{
public:
    typedef std::shared_ptr<mimo_detector> sptr;

    /*!
     * \param algorithm a registered detector family: nway, ml, mtt, ot, ...
     *        (algorithms() lists them)
     * \param parameters the family's parameters, "name=value" separated by
     *        commas, e.g. "passes=2,llr_clip=8"; those not given take the
     *        family's defaults
     * \param noise_var N0 (> 0) until a noise_var tag says otherwise
     * \param symbols_per_channel S: received vectors per H item (>= 1)
     * \param backend auto, cpu or cuda
     * \param max_batch received vectors per core call, rounded down to whole
     *        channels of S (at least one channel)
     * \param policy what a bad received vector does: "erase" or "stop"
     * \param device_buffers keep H, y and the LLRs in GPU memory (GNU Radio
     *        custom buffers) where the block runs on CUDA and the family has a
     *        device path (the default): between GPU blocks nothing crosses PCIe;
     *        next to an ordinary block the buffer copies the items across.
     *        Elsewhere, and with False, host buffers.
     */
    static sptr make(const std::string& algorithm,
                     int nr,
                     int nt,
                     const std::string& modulation,
                     const std::string& parameters = "",
                     double noise_var = 1.0,
                     int symbols_per_channel = 1,
                     const std::string& backend = "auto",
                     int max_batch = 8400,
                     const std::string& policy = "erase",
                     bool device_buffers = true);

    /// The registered detector families.
    /*!
     * As make(), the family and its parameters from a parsed spec
     * (mimo_gpu::parse_detector_spec, mimo_gpu::default_comparison): for C++
     * programs that hold specs already.
     */
    static sptr make_from_spec(const ::mimo_gpu::detector_spec& spec,
                               int nr,
                               int nt,
                               const std::string& modulation,
                               double noise_var = 1.0,
                               int symbols_per_channel = 1,
                               const std::string& backend = "auto",
                               int max_batch = 8400,
                               const std::string& policy = "erase",
                               bool device_buffers = true);

    static std::vector<std::string> algorithms();

    virtual std::string algorithm() const = 0;
    virtual void set_noise_var(double noise_var) = 0;
    virtual double noise_var() const = 0;
    /// Changes a parameter that the family allows to change while running (e.g.
    /// llr_clip).
    virtual void set_parameter(const std::string& name, double value) = 0;
    virtual double parameter(const std::string& name) const = 0;
    virtual std::string active_backend() const = 0;
    /// Received vectors erased so far (bad input), exact.
    virtual uint64_t erased_problems() const = 0;
    /// The block detects received vectors in batches of max_batch; fewer wait
    /// at most this long (default 5 ms) before they are detected all the same,
    /// so a live stream that pauses is not held back. At the end of a stream
    /// the tail is detected at once.
    virtual void set_max_wait_ms(double ms) = 0;
    virtual double max_wait_ms() const = 0;
    /// Whether H, y and the LLRs live in GPU memory (make's device_buffers, where
    /// the block runs on CUDA with a family that has a device path).
    virtual bool device_buffers() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif /* INCLUDED_MIMO_GPU_MIMO_DETECTOR_H */
