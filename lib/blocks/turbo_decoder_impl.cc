/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/block_parameters.h"
#include "turbo_decoder_impl.h"
#include <mimo_gpu/turbo_parameters.h>

#include <gnuradio/io_signature.h>

#include <cmath>
#include <exception>

namespace gr {
namespace mimo_gpu {

namespace {
const pmt::pmt_t k_crc_ok_key = pmt::intern("crc_ok");
const pmt::pmt_t k_iterations_key = pmt::intern("iterations");
const pmt::pmt_t k_no_information_key = pmt::intern("no_information");
} // namespace

turbo_decoder::sptr turbo_decoder::make(int K,
                                        const std::string& length_tag_key,
                                        const std::string& algorithm,
                                        int iterations,
                                        double extrinsic_scale,
                                        int window,
                                        const std::string& crc,
                                        const std::string& backend,
                                        int max_blocks)
{
    return gnuradio::make_block_sptr<turbo_decoder_impl>(K,
                                                         length_tag_key,
                                                         algorithm,
                                                         iterations,
                                                         extrinsic_scale,
                                                         window,
                                                         crc,
                                                         backend,
                                                         max_blocks);
}

turbo_decoder_impl::turbo_decoder_impl(int K,
                                       const std::string& length_tag_key,
                                       const std::string& algorithm,
                                       int iterations,
                                       double extrinsic_scale,
                                       int window,
                                       const std::string& crc,
                                       const std::string& backend,
                                       int max_blocks)
    : gr::block("turbo_decoder",
                gr::io_signature::make(1, 1, sizeof(float)),
                gr::io_signature::make(1, 1, sizeof(uint8_t))),
      d_K(::mimo_gpu::checked_code_block_size(K)),
      d_backend(::mimo_gpu::backend_from_string(backend)),
      d_max_blocks(checked_max_batch(max_blocks, "max_blocks")),
      d_framing(*this, code_block_input::llrs, K, length_tag_key, d_logger),
      d_decoder(
          ::mimo_gpu::turbo_config(algorithm, iterations, extrinsic_scale, window, crc),
          d_backend)
{
    request_batch_sized_output_buffers(*this, d_max_blocks * size_t(K));
    d_logger->info("K {}{} {} decoder, {} iterations, up to {} code blocks a call, on "
                   "backend {}",
                   K,
                   d_framing.tagged() ? " (largest; packets by length tag)" : "",
                   to_string(d_decoder.config().algorithm),
                   iterations,
                   d_max_blocks,
                   active_backend());
}

void turbo_decoder_impl::reconfigure(::mimo_gpu::turbo_decoder_config config)
{
    config.validate(); // throws before anything changes
    gr::thread::scoped_lock lock(d_mutex);
    d_decoder = ::mimo_gpu::lte_turbo_decoder(config, d_backend);
}

void turbo_decoder_impl::set_iterations(int iterations)
{
    auto config = [&] {
        gr::thread::scoped_lock lock(d_mutex);
        return d_decoder.config();
    }();
    config.iterations = iterations;
    reconfigure(config);
}

int turbo_decoder_impl::iterations() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_decoder.config().iterations;
}

void turbo_decoder_impl::set_extrinsic_scale(double extrinsic_scale)
{
    auto config = [&] {
        gr::thread::scoped_lock lock(d_mutex);
        return d_decoder.config();
    }();
    config.extrinsic_scale = static_cast<float>(extrinsic_scale);
    reconfigure(config);
}

double turbo_decoder_impl::extrinsic_scale() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_decoder.config().extrinsic_scale;
}

std::string turbo_decoder_impl::active_backend() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return ::mimo_gpu::to_string(d_decoder.active_backend());
}

std::vector<gr::tag_t> turbo_decoder_impl::length_tags(int ninput_items)
{
    std::vector<gr::tag_t> tags;
    if (d_framing.tagged())
        get_tags_in_window(tags, 0, 0, ninput_items, d_framing.key());
    return tags;
}

void turbo_decoder_impl::add_length_tags(const std::vector<code_block_span>& blocks)
{
    for (const auto& tag : d_framing.output_length_tags(blocks))
        add_item_tag(0, tag);
}

void turbo_decoder_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    d_framing.forecast(noutput_items, ninput_items_required);
}

bool turbo_decoder_impl::stop()
{
    d_framing.stop();
    return gr::block::stop();
}

int turbo_decoder_impl::general_work(int noutput_items,
                                     gr_vector_int& ninput_items,
                                     gr_vector_const_void_star& input_items,
                                     gr_vector_void_star& output_items)
{
    const auto llr = static_cast<const float*>(input_items[0]);
    auto bits = static_cast<uint8_t*>(output_items[0]);
    gr::thread::scoped_lock lock(d_mutex);
    if (d_failed)
        return WORK_DONE;

    // A block with a non-finite LLR is dropped here, so that it cannot fail the
    // decoder call of the whole batch.
    const auto finite = [&](const code_block_span& block) {
        const float* first = llr + block.in_offset;
        const int count = d_framing.items_in(block.K);
        for (int i = 0; i < count; ++i) {
            if (!std::isfinite(first[i])) {
                d_logger->error(
                    "code block at LLR item {} (K {}): LLR {} of its {} is not "
                    "finite; dropped",
                    nitems_read(0) + block.in_offset,
                    block.K,
                    i,
                    count);
                return false;
            }
        }
        return true;
    };
    int consumed = 0;
    auto blocks = d_framing.plan(length_tags(ninput_items[0]),
                                 ninput_items[0],
                                 noutput_items,
                                 d_max_blocks,
                                 finite,
                                 consumed);

    // One decoder call per run of back-to-back blocks: all of them, unless a
    // dropped packet sits in between.
    int produced = 0;
    const uint64_t first_out = nitems_written(0);
    for (const auto& [begin, end] : contiguous_runs(blocks, d_framing)) {
        d_block_K.clear();
        for (size_t b = begin; b < end; ++b)
            d_block_K.push_back(blocks[b].K);
        std::vector<::mimo_gpu::turbo_block_result> results;
        try {
            results = d_decoder.decode(d_block_K,
                                       llr + blocks[begin].in_offset,
                                       bits + blocks[begin].out_offset);
        } catch (const std::exception& e) {
            d_logger->error("code blocks at LLR items {}..{}: {}; ending the stream",
                            nitems_read(0) + blocks[begin].in_offset,
                            nitems_read(0) + blocks[end - 1].in_offset +
                                d_framing.items_in(blocks[end - 1].K) - 1,
                            e.what());
            d_failed = true;
            consume_each(blocks[begin].in_offset);
            blocks.resize(begin);
            add_length_tags(blocks);
            return produced > 0 ? produced : WORK_DONE;
        }
        const bool with_crc =
            d_decoder.config().early_termination != ::mimo_gpu::crc_type::none;
        for (size_t b = begin; b < end; ++b) {
            const uint64_t offset = first_out + blocks[b].out_offset;
            const auto& result = results[b - begin];
            add_item_tag(0, offset, k_iterations_key, pmt::from_long(result.iterations));
            if (with_crc)
                add_item_tag(0, offset, k_crc_ok_key, pmt::from_bool(result.crc_ok));
            if (result.no_information)
                add_item_tag(0, offset, k_no_information_key, pmt::PMT_T);
        }
        produced = blocks[end - 1].out_offset + blocks[end - 1].K;
    }
    add_length_tags(blocks);
    consume_each(consumed);
    return produced;
}

} // namespace mimo_gpu
} // namespace gr
