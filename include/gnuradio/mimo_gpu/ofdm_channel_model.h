/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_H
#define INCLUDED_MIMO_GPU_OFDM_CHANNEL_MODEL_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief nt -> nr multipath channel for OFDM frames (simulation and loopback tests).
 * \ingroup mimo_gpu
 *
 * Inputs: nt complex streams (ofdm_tx's frames); outputs: nr complex streams.
 * Each frame of frame_samples() input samples per antenna goes through a
 * tapped delay line per antenna pair (flat, EPA, EVA or ETU; new Rayleigh taps
 * per frame, or with `doppler` > 0 continuous Rayleigh fading with the
 * Clarke/Jakes spectrum, running on from frame to frame; optional
 * exponential spatial correlation), a carrier frequency
 * offset, timing_offset noise samples in front, and AWGN of N0 = 10^(-snr/10):
 * timing_offset + frame_samples() + the delay spread output samples per frame.
 * On CUDA the samples are convolved, rotated and noised on the GPU (the taps are
 * the CPU's, the noise counter-based: the same samples to rounding), read
 * where they are (ofdm_tx's device buffers stay on the GPU) and written to
 * device buffers for a GPU reader with device_buffers.
 */
class MIMO_GPU_API ofdm_channel_model : virtual public gr::block
{
public:
    typedef std::shared_ptr<ofdm_channel_model> sptr;

    /*!
     * \param grid, nt, slots, data_symbols the frame (as ofdm_tx)
     * \param nr receive antennas
     * \param profile flat, epa, eva, etu
     * \param snr_db Es/N0 per receive antenna and stream
     * \param cfo carrier frequency offset in subcarrier spacings
     * \param timing_offset noise samples before each frame
     * \param seed generator seed
     * \param tx_correlation, rx_correlation exponential correlation in [0, 1)
     * \param doppler maximum Doppler frequency in Hz (0: block fading, new taps
     *        per frame; e.g. 5, 70, 300 for 36.101's EPA5, EVA70, ETU300)
     * \param backend "auto", "cpu" or "cuda" (the same samples to rounding)
     * \param device_buffers on CUDA, the receive streams in GPU memory (the default)
     * \param pilot_positions the slot's pilot symbols (as ofdm_tx)
     * \param antenna_noise_db each receive antenna's noise relative to the
     *        SNR's, in dB (nr values; empty: alike), radio chains apart
     */
    static sptr make(const std::string& grid = "lte1.4",
                     int nt = 2,
                     int nr = 2,
                     int slots = 2,
                     int data_symbols = 6,
                     const std::string& profile = "epa",
                     double snr_db = 20,
                     double cfo = 0,
                     int timing_offset = 0,
                     uint64_t seed = 1,
                     double tx_correlation = 0,
                     double rx_correlation = 0,
                     double doppler = 0,
                     const std::string& backend = "auto",
                     bool device_buffers = true,
                     const std::vector<int>& pilot_positions = std::vector<int>{ 0 },
                     const std::vector<double>& antenna_noise_db = std::vector<double>{});

    virtual void set_snr_db(double snr_db) = 0;
    virtual double snr_db() const = 0;
    virtual std::string active_backend() const = 0;
    /// Whether the receive streams live in GPU memory (make's device_buffers, on CUDA).
    virtual bool device_buffers() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
