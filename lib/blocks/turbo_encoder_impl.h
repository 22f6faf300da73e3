/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TURBO_ENCODER_IMPL_H
#define INCLUDED_MIMO_GPU_TURBO_ENCODER_IMPL_H

#include <gnuradio/mimo_gpu/turbo_encoder.h>

#include "plumbing/code_block_framing.h"

namespace gr {
namespace mimo_gpu {

class turbo_encoder_impl : public turbo_encoder
{
public:
    turbo_encoder_impl(int K, const std::string& length_tag_key);

    int K() const override { return d_K; }
    std::string length_tag_key() const override { return d_framing.length_tag_key(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    /// Warns about (and drops) a partial code block left at the end of the stream.
    bool stop() override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    /// The length tags on the input (none without a key), for the framing.
    std::vector<gr::tag_t> length_tags(int ninput_items);
    void add_length_tags(const std::vector<code_block_span>& blocks);

    const int d_K;
    code_block_framing d_framing;
};

} // namespace mimo_gpu
} // namespace gr

#endif
