/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_IDD_RECEIVER_IMPL_H
#define INCLUDED_MIMO_GPU_IDD_RECEIVER_IMPL_H

#include "plumbing/rate_limited_warning.h"
#include <gnuradio/mimo_gpu/idd_receiver.h>
#include <mimo_gpu/iterative_receiver.h>

#include <gnuradio/thread/thread.h>

#include <atomic>
#include <memory>

namespace gr {
namespace mimo_gpu {

/// The block around the core iterative_receiver: whole transport blocks of
/// (H, y) per call, N0 from the tags, the results as tags.
class idd_receiver_impl : public idd_receiver
{
public:
    idd_receiver_impl(std::unique_ptr<::mimo_gpu::iterative_receiver> receiver,
                      std::string algorithm,
                      double noise_var,
                      int symbols_per_channel,
                      int max_blocks);

    std::string algorithm() const override { return d_algorithm; }
    std::string active_backend() const override;
    int outer_iterations() const override;
    void set_outer_iterations(int outer_iterations) override;
    void set_noise_var(double noise_var) override;
    double noise_var() const override;
    uint64_t blocks() const override { return d_blocks; }
    uint64_t crc_failures() const override { return d_crc_failures; }
    uint64_t passes() const override { return d_passes; }
    uint64_t dropped_vectors() const override { return d_dropped_vectors; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    bool inputs_ended() const;
    /// Whether an input has ended with less than a transport block's items:
    /// no whole block can come any more.
    bool starved() const;
    /// Receives `count` transport blocks from the inputs' start with one N0.
    void receive(const gr_complex* H,
                 const gr_complex* y,
                 size_t first,
                 size_t count,
                 float n0,
                 uint8_t* bits);

    std::unique_ptr<::mimo_gpu::iterative_receiver> d_receiver;
    const std::string d_algorithm;
    const int d_S, d_vectors_per_block, d_channels_per_block, d_max_blocks;
    mutable gr::thread::mutex d_mutex; // N0 and the outer iterations, set from any thread
    float d_noise_var;
    int d_outer_iterations;
    rate_limited_warning d_ignored_noise_var;
    std::atomic<uint64_t> d_blocks{ 0 }, d_crc_failures{ 0 }, d_passes{ 0 },
        d_dropped_vectors{ 0 };
};

} // namespace mimo_gpu
} // namespace gr

#endif
