/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_CHANNEL_SOURCE_H
#define INCLUDED_MIMO_GPU_MIMO_CHANNEL_SOURCE_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief Simulation source: random bits through an i.i.d. Rayleigh MIMO channel,
 * drawn on the GPU (or the CPU) from a counter-based generator.
 * \ingroup mimo_gpu
 *
 * Output 0: H (gr_complex, vlen nr*nt, one per symbols_per_channel problems).
 * Output 1: y = H s + n (gr_complex, vlen nr). Output 2: the bits (bytes 0/1,
 * vlen nt*Q) that s carries, for an error counter.
 * Problem p's bits and channel c's H depend only on the seed and p (c), so the
 * stream is the same on both backends (bits exactly, H and y to float
 * rounding) whatever the batch sizes. On CUDA the outputs are device buffers:
 * a detector and a ber_counter with device buffers take them without a trip
 * over PCIe. A "noise_var" tag on H and y at the first item and after every
 * SNR change sets the detectors' N0.
 *
 * Input 0 (optional): the bits to send instead of drawn ones (bytes, non-zero
 * is 1), bits_per_input_item per item: nt*Q (one received vector), or a
 * multiple of it such as a transport block's G coded bits (tb_source). H and
 * the noise are the stream's own as without; the stream ends with the input,
 * and bits that make no whole channel at its end are not sent (with
 * `problems`, the stream ends at the last whole input item within it). Output 2 may
 * then be left unconnected (it must be connected when the bits are drawn here).
 */
class MIMO_GPU_API mimo_channel_source : virtual public gr::block
{
public:
    typedef std::shared_ptr<mimo_channel_source> sptr;

    /*!
     * \param snr_db Es/N0 per receive antenna in dB
     * \param problems problems to produce before the stream ends (0: endless),
     *        rounded up to whole channels
     * \param backend "auto", "cpu" or "cuda"
     * \param max_batch problems per generator call
     * \param device_buffers on CUDA, outputs in GPU memory (the default); False:
     *        ordinary host buffers (the generator still runs on the GPU), for
     *        flowgraphs where an ordinary block with history reads an output
     * \param bits_per_input_item bits per item of the optional input: 0 for
     *        nt*Q, else a multiple of nt*Q
     */
    static sptr make(int nr,
                     int nt,
                     const std::string& modulation,
                     double snr_db,
                     uint64_t seed,
                     int symbols_per_channel = 1,
                     uint64_t problems = 0,
                     const std::string& backend = "auto",
                     int max_batch = 65536,
                     bool device_buffers = true,
                     int bits_per_input_item = 0);

    virtual void set_snr_db(double snr_db) = 0;
    virtual double snr_db() const = 0;
    virtual double noise_var() const = 0;
    virtual std::string active_backend() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
