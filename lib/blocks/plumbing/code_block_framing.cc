/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "code_block_framing.h"
#include <mimo_gpu/turbo_parameters.h>

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <mimo_gpu/lte_turbo_code.h>

#include <algorithm>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

code_block_framing::code_block_framing(gr::block& block,
                                       code_block_input input,
                                       int K_max,
                                       const std::string& length_tag_key,
                                       gr::logger_ptr logger)
    : m_block(block),
      m_input(input),
      m_K_max(::mimo_gpu::checked_code_block_size(K_max)),
      m_key_string(length_tag_key),
      m_key(pmt::string_to_symbol(length_tag_key)),
      m_logger(std::move(logger))
{
    // One code block of K_max always fits in the output; GNU Radio also sizes
    // the upstream buffer from this multiple and the rate (2 * in/out * multiple
    // items), so that a whole code block of K_max fits in the input.
    m_block.set_output_multiple(items_out(K_max));
    m_block.set_relative_rate(static_cast<uint64_t>(items_out(K_max)),
                              static_cast<uint64_t>(items_in(K_max)));
    if (tagged())
        m_block.set_tag_propagation_policy(gr::block::TPP_DONT);
}

int code_block_framing::items_in(int K) const
{
    return m_input == code_block_input::bits ? K : 3 * (K + 4);
}

int code_block_framing::items_out(int K) const
{
    return m_input == code_block_input::bits ? 3 * (K + 4) : K;
}

int code_block_framing::K_of_packet(int64_t length) const
{
    int64_t K = length;
    if (m_input == code_block_input::llrs)
        K = length % 3 == 0 ? length / 3 - 4 : 0;
    if (K < 40 || K > m_K_max || !::mimo_gpu::qpp_interleaver::is_block_size(int(K)))
        return 0;
    return static_cast<int>(K);
}

void code_block_framing::forecast(int noutput_items,
                                  gr_vector_int& ninput_items_required) const
{
    int required;
    if (!tagged())
        required = std::max(1, noutput_items / items_out(m_K_max)) * items_in(m_K_max);
    else
        required = m_next_packet_items > 0 ? m_next_packet_items : 1;
    std::fill(ninput_items_required.begin(), ninput_items_required.end(), required);
}

std::vector<code_block_span>
code_block_framing::plan(std::vector<gr::tag_t> length_tags,
                         int ninput_items,
                         int noutput_items,
                         size_t max_blocks,
                         const std::function<bool(const code_block_span&)>& accept,
                         int& consumed)
{
    std::vector<code_block_span> blocks;
    int in = 0, out = 0;
    const uint64_t first = m_block.nitems_read(0);
    std::sort(length_tags.begin(), length_tags.end(), gr::tag_t::offset_compare);
    size_t next_tag = 0;
    while (blocks.size() < max_blocks) {
        int K = m_K_max;
        if (tagged()) {
            m_next_packet_items = 0;
            if (m_skip_items > 0) {
                const int skip =
                    static_cast<int>(std::min<int64_t>(m_skip_items, ninput_items - in));
                in += skip;
                m_skip_items -= skip;
                m_dropped_items += static_cast<uint64_t>(skip);
                if (m_skip_items > 0)
                    break;
            }
            if (in >= ninput_items)
                break;
            // The first length tag at or after item `in` (tags are sorted by offset).
            while (next_tag < length_tags.size() &&
                   length_tags[next_tag].offset < first + in)
                ++next_tag;
            if (next_tag == length_tags.size() ||
                length_tags[next_tag].offset != first + in) {
                // No packet starts here: skip to the next length tag (or all we have).
                const int next =
                    next_tag == length_tags.size()
                        ? ninput_items
                        : static_cast<int>(length_tags[next_tag].offset - first);
                m_logger->warn("no \"{}\" length tag at item {}: {} untagged {} up to "
                               "the next packet dropped",
                               m_key_string,
                               first + in,
                               next - in,
                               unit());
                m_dropped_items += static_cast<uint64_t>(next - in);
                in = next;
                continue;
            }
            const pmt::pmt_t value = length_tags[next_tag].value;
            const int64_t length = pmt::is_integer(value) ? pmt::to_long(value) : -1;
            K = K_of_packet(length);
            if (K == 0) {
                m_logger->error(
                    "packet at item {} has length {}: not {} of a code block size K of "
                    "TS 36.212 table 5.1.3-3 up to {}; dropped",
                    first + in,
                    length,
                    m_input == code_block_input::bits ? "K bits" : "3(K+4) LLRs",
                    m_K_max);
                // Skip its items (possibly over several calls); a length < 1 only this
                // item.
                m_skip_items = std::max<int64_t>(length, 1);
                continue;
            }
            if (in + items_in(K) > ninput_items) {
                m_next_packet_items = items_in(K); // forecast() waits for all of it
                break;
            }
        } else if (in + items_in(K) > ninput_items) {
            break;
        }
        if (out + items_out(K) > noutput_items)
            break;
        const code_block_span block{ K, in, out };
        in += items_in(K);
        if (accept && !accept(block)) {
            m_dropped_items += static_cast<uint64_t>(items_in(K));
            continue;
        }
        blocks.push_back(block);
        out += items_out(K);
    }
    consumed = in;
    return blocks;
}

const char* code_block_framing::unit() const
{
    return m_input == code_block_input::bits ? "bits" : "LLRs";
}

void code_block_framing::stop()
{
    const auto detail = m_block.detail();
    if (!detail || detail->ninputs() < 1)
        return; // never ran
    const auto reader = detail->input(0);
    int left;
    {
        gr::thread::scoped_lock guard(*reader->mutex());
        left = reader->items_available();
    }
    if (left <= 0)
        return;
    m_dropped_items += static_cast<uint64_t>(left);
    const uint64_t at = m_block.nitems_read(0);
    if (m_skip_items > 0)
        m_logger->warn("{} {} at item {} (the rest of a dropped packet) left at stop: "
                       "dropped",
                       left,
                       unit(),
                       at);
    else if (m_next_packet_items > 0)
        m_logger->warn("{} {} at item {} left at stop: part of a packet of {}, "
                       "dropped",
                       left,
                       unit(),
                       at,
                       m_next_packet_items);
    else if (tagged())
        m_logger->warn("{} {} at item {} left at stop: dropped", left, unit(), at);
    else
        m_logger->warn("{} {} at item {} left at stop: less than a code block ({}), "
                       "dropped",
                       left,
                       unit(),
                       at,
                       items_in(m_K_max));
}

std::vector<gr::tag_t>
code_block_framing::output_length_tags(const std::vector<code_block_span>& blocks) const
{
    std::vector<gr::tag_t> tags;
    if (!tagged())
        return tags;
    const uint64_t first = m_block.nitems_written(0);
    for (const auto& block : blocks) {
        gr::tag_t tag;
        tag.offset = first + block.out_offset;
        tag.key = m_key;
        tag.value = pmt::from_long(items_out(block.K));
        tags.push_back(tag);
    }
    return tags;
}

std::vector<std::pair<size_t, size_t>>
contiguous_runs(const std::vector<code_block_span>& blocks,
                const code_block_framing& framing)
{
    std::vector<std::pair<size_t, size_t>> runs; // [begin, end) indices into blocks
    for (size_t b = 0; b < blocks.size(); ++b) {
        if (!runs.empty()) {
            const auto& last = blocks[runs.back().second - 1];
            if (last.in_offset + framing.items_in(last.K) == blocks[b].in_offset) {
                runs.back().second = b + 1;
                continue;
            }
        }
        runs.emplace_back(b, b + 1);
    }
    return runs;
}

} // namespace mimo_gpu
} // namespace gr
