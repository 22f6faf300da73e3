/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TURBO_DECODER_IMPL_H
#define INCLUDED_MIMO_GPU_TURBO_DECODER_IMPL_H

#include <gnuradio/mimo_gpu/turbo_decoder.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include "plumbing/code_block_framing.h"

namespace gr {
namespace mimo_gpu {

class turbo_decoder_impl : public turbo_decoder
{
public:
    turbo_decoder_impl(int K,
                       const std::string& length_tag_key,
                       const std::string& algorithm,
                       int iterations,
                       double extrinsic_scale,
                       int window,
                       const std::string& crc,
                       const std::string& backend,
                       int max_blocks);

    int K() const override { return d_K; }
    void set_iterations(int iterations) override;
    int iterations() const override;
    void set_extrinsic_scale(double extrinsic_scale) override;
    double extrinsic_scale() const override;
    std::string active_backend() const override;
    uint64_t dropped_llrs() const override { return d_framing.dropped_items(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    /// Warns about (and counts) LLRs left at the end of the stream.
    bool stop() override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    /// The length tags on the input (none without a key), for the framing.
    std::vector<gr::tag_t> length_tags(int ninput_items);
    void add_length_tags(const std::vector<code_block_span>& blocks);

    /// Rebuilds the core decoder with a changed configuration (under d_mutex).
    void reconfigure(::mimo_gpu::turbo_decoder_config config);

    const int d_K;
    const ::mimo_gpu::backend d_backend;
    const size_t d_max_blocks;
    code_block_framing d_framing;
    mutable gr::thread::mutex d_mutex; // guards the decoder, rebuilt by the setters
    ::mimo_gpu::lte_turbo_decoder d_decoder;
    std::vector<int> d_block_K;
    bool d_failed = false;
};

} // namespace mimo_gpu
} // namespace gr

#endif
