/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_RX_H
#define INCLUDED_MIMO_GPU_OFDM_RX_H

#include <gnuradio/block.h>
#include <gnuradio/mimo_gpu/api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/*!
 * \brief MIMO-OFDM receiver front end: nr antenna streams in; H and y out for
 * mimo_detector. \ingroup mimo_gpu
 *
 * Inputs: nr complex streams (a USRP's channels, a recording, ofdm_channel_model).
 * Frames are found one after another (Schmidl-Cox timing and CFO over all
 * antennas), CFO-corrected, FFT'd and estimated from the pilots (LS, LMMSE or
 * linear interpolation, N0 from the pilots), on the CPU or CUDA. The samples
 * are copied once, into the receiver's window (on CUDA: device memory, through
 * page-locked staging), and searched and demodulated there, all the complete
 * frames of a call in one batch (the core's ofdm_stream_receiver).
 * Output 0: H (complex, vlen nr*nt), one item per channel; output 1: y (complex,
 * vlen nr), one item per resource element, symbols_per_channel() y items per H
 * item, in the resource-element order of docs/front_end.md (the detector's
 * LLRs are then the frame's codeword). Each frame's first items carry a
 * "noise_var" tag (N0) on both outputs and an "ofdm_frame" tag (dict: cfo,
 * frame_start, delay_spread, doppler, antenna_n0: each receive antenna's
 * noise, whitened: whether y and H rows were scaled by sqrt(N0 / N0_r)) on y. Samples
 * without a complete frame are dropped (counted; the count is logged at the end of the
 * stream). A frame whose pilots hold non-finite samples is dropped and counted
 * (frames_dropped); non-finite samples elsewhere reach the detector, which erases the
 * resource elements they touch. Input tags are not propagated (the rate changes per
 * frame). The streams must have the same length: when one ends, the receiver
 * ends (what the others hold beyond it is counted and logged). A stream whose
 * "ofdm_grid" tag (sigmf_file_source puts the recording's frame on its first
 * sample) names another frame is refused: the difference is logged, the
 * stream ends, frame_mismatch() says so.
 *
 * With device_buffers (the default) on CUDA, H and y are GNU Radio custom
 * buffers in GPU memory: mimo_detector reads them there, and an ordinary block
 * reads a host copy.
 */
class MIMO_GPU_API ofdm_rx : virtual public gr::block
{
public:
    typedef std::shared_ptr<ofdm_rx> sptr;

    /*!
     * \param grid, nt, modulation, slots, data_symbols the frame (as ofdm_tx)
     * \param nr receive antennas (nt..8)
     * \param time_interpolation "hold" (symbols_per_channel = data_symbols), "linear"
     * or "lmmse" (1) \param frequency_interpolation "lmmse" or "linear" \param backend
     * "auto", "cpu" or "cuda" \param device_buffers on CUDA, H and y in GPU memory (the
     * default); False: host buffers on either backend \param pilot_positions the
     * slot's pilot symbols (as ofdm_tx)
     * \param noise_per_antenna measure each receive antenna's noise (LMMSE in
     * frequency) and, where they differ by more than 1.5 dB, whiten: each
     * antenna's y and row of H scaled by sqrt(N0 / N0_r) (the ofdm_frame tag's
     * antenna_n0 and whitened say so); false: one N0 for all antennas
     * \param across_frames estimation across frames (needs "lmmse" in time):
     * a frame that follows the one before closely, on a channel its own
     * Doppler says is slow, adds that frame's pilot symbols to its time
     * filter (the ofdm_frame tag's linked says so)
     * \param gpu_batch_speed on CUDA, short frames (up to 8, 2^19 samples over
     * the antennas) are searched and demodulated in batches while the samples
     * come at least this many times the air rate (a recording replayed): 2 by
     * default; 0: whatever the pace; infinity: a frame at a time
     */
    static sptr make(const std::string& grid = "lte1.4",
                     int nt = 2,
                     int nr = 2,
                     const std::string& modulation = "16qam",
                     int slots = 2,
                     int data_symbols = 6,
                     const std::string& time_interpolation = "hold",
                     const std::string& frequency_interpolation = "lmmse",
                     const std::string& backend = "auto",
                     bool device_buffers = true,
                     const std::vector<int>& pilot_positions = std::vector<int>{ 0 },
                     bool noise_per_antenna = true,
                     bool across_frames = false,
                     double gpu_batch_speed = 2.0);

    virtual int symbols_per_channel() const = 0;
    virtual uint64_t frames_received() const = 0;
    virtual uint64_t samples_dropped() const = 0;
    virtual double last_noise_var() const = 0;
    virtual double last_cfo() const = 0;
    /// Frames found whose pilots held non-finite samples: dropped.
    virtual uint64_t frames_dropped() const = 0;
    virtual std::string active_backend() const = 0;
    /// Whether H and y live in GPU memory (make's device_buffers, on CUDA).
    virtual bool device_buffers() const = 0;
    /// Where the receiver's time went so far, in words: taking samples in,
    /// searching for frames, demodulating them (ms per frame, calls).
    virtual std::string timing_summary() const = 0;
    /// Whether the stream was refused: an "ofdm_grid" tag on it (a recording's
    /// frame, from sigmf_file_source) named another frame than this block's.
    /// The difference is logged and the stream ends.
    virtual bool frame_mismatch() const = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
