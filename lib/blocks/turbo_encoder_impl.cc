/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "turbo_encoder_impl.h"
#include <mimo_gpu/turbo_parameters.h>

#include <gnuradio/io_signature.h>
#include <mimo_gpu/lte_turbo_code.h>

#include <exception>

namespace gr {
namespace mimo_gpu {

turbo_encoder::sptr turbo_encoder::make(int K, const std::string& length_tag_key)
{
    return gnuradio::make_block_sptr<turbo_encoder_impl>(K, length_tag_key);
}

turbo_encoder_impl::turbo_encoder_impl(int K, const std::string& length_tag_key)
    : gr::block("turbo_encoder",
                gr::io_signature::make(1, 1, sizeof(uint8_t)),
                gr::io_signature::make(1, 1, sizeof(uint8_t))),
      d_K(::mimo_gpu::checked_code_block_size(K)),
      d_framing(*this, code_block_input::bits, K, length_tag_key, d_logger)
{
}

std::vector<gr::tag_t> turbo_encoder_impl::length_tags(int ninput_items)
{
    std::vector<gr::tag_t> tags;
    if (d_framing.tagged())
        get_tags_in_window(tags, 0, 0, ninput_items, d_framing.key());
    return tags;
}

void turbo_encoder_impl::add_length_tags(const std::vector<code_block_span>& blocks)
{
    for (const auto& tag : d_framing.output_length_tags(blocks))
        add_item_tag(0, tag);
}

void turbo_encoder_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    d_framing.forecast(noutput_items, ninput_items_required);
}

bool turbo_encoder_impl::stop()
{
    d_framing.stop();
    return gr::block::stop();
}

int turbo_encoder_impl::general_work(int noutput_items,
                                     gr_vector_int& ninput_items,
                                     gr_vector_const_void_star& input_items,
                                     gr_vector_void_star& output_items)
{
    const auto in = static_cast<const uint8_t*>(input_items[0]);
    auto out = static_cast<uint8_t*>(output_items[0]);

    int consumed = 0;
    auto blocks = d_framing.plan(length_tags(ninput_items[0]),
                                 ninput_items[0],
                                 noutput_items,
                                 SIZE_MAX,
                                 nullptr,
                                 consumed);
    int produced = 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
        const auto& block = blocks[b];
        const int D = block.K + 4;
        uint8_t* d = out + block.out_offset;
        try {
            ::mimo_gpu::turbo_encode(in + block.in_offset, block.K, d, d + D, d + 2 * D);
        } catch (const std::exception& e) {
            // Not expected (K is checked); never let an exception hang the flowgraph.
            d_logger->error("code block at item {}: {}; ending the stream",
                            nitems_read(0) + block.in_offset,
                            e.what());
            blocks.resize(b);
            add_length_tags(blocks);
            consume_each(block.in_offset);
            return produced > 0 ? produced : WORK_DONE;
        }
        produced = block.out_offset + 3 * D;
    }
    add_length_tags(blocks);
    consume_each(consumed);
    return produced;
}

} // namespace mimo_gpu
} // namespace gr
