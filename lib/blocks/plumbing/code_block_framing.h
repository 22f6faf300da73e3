/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_CODE_BLOCK_FRAMING_H
#define INCLUDED_MIMO_GPU_CODE_BLOCK_FRAMING_H

#include <gnuradio/block.h>
#include <gnuradio/logger.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// Which side of the turbo code a block's input is: bits (K items per code
/// block, the encoder) or LLRs (3(K+4) items, the decoder).
enum class code_block_input { bits, llrs };

/// One code block found in a general_work() call's input.
struct code_block_span {
    int K;
    int in_offset;  ///< first input item, relative to this call
    int out_offset; ///< first output item, relative to this call
};

/// Where a turbo block's code blocks are in its input stream: every
/// items_in(K) items (no length tag key), or one per length-tagged packet.
/// Shared by turbo_encoder and turbo_decoder (general blocks), so both treat
/// lengths, bad packets and the end of the stream alike:
///  - a packet whose length is no code block of a table K <= K_max is logged
///    as an error and skipped; input with no length tag where a packet must
///    start (e.g. before the first tag) gets a warning naming how many items
///    are dropped, and is skipped;
///  - a partial code block or packet at the end of the stream is left
///    unconsumed, and forecast() then asks for more input than will come, so
///    the scheduler ends the block (no hang); stop() then warns how many
///    items were left undecoded.
/// dropped_items() counts every input item skipped or left over this way.
class code_block_framing
{
public:
    /// Sets the block's output multiple (one code block of K_max), relative
    /// rate and, with a key, tag propagation (TPP_DONT: the length tags are
    /// written by tag_output()). Throws std::invalid_argument on a bad K.
    code_block_framing(gr::block& block,
                       code_block_input input,
                       int K_max,
                       const std::string& length_tag_key,
                       gr::logger_ptr logger);

    int items_in(int K) const;
    int items_out(int K) const;
    bool tagged() const { return !m_key_string.empty(); }
    const std::string& length_tag_key() const { return m_key_string; }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) const;

    const pmt::pmt_t& key() const { return m_key; }

    /// The code blocks (at most max_blocks) that fit in ninput_items input and
    /// noutput_items output items, in stream order. length_tags: with a key,
    /// the key's tags on those input items (get_tags_in_window), else none.
    /// `accept` may reject a block (e.g. non-finite LLRs, after logging why):
    /// it is consumed, not produced. `consumed` is what general_work() must
    /// consume (skipped packets included); the produced items are the last
    /// block's out_offset + items_out(K).
    std::vector<code_block_span>
    plan(std::vector<gr::tag_t> length_tags,
         int ninput_items,
         int noutput_items,
         size_t max_blocks,
         const std::function<bool(const code_block_span&)>& accept,
         int& consumed);

    /// With a key: the length tags (items_out(K)) for each block's first output
    /// item, for general_work() to add.
    std::vector<gr::tag_t>
    output_length_tags(const std::vector<code_block_span>& blocks) const;

    /// For the block's stop(): the input items still waiting (a partial code
    /// block or packet, the flowgraph being done or stopped) are dropped: logs a
    /// warning naming how many, and counts them.
    void stop();

    /// Input items dropped so far without being coded: untagged items, packets of
    /// a bad length, blocks `accept` rejected, and what stop() found left over.
    uint64_t dropped_items() const { return m_dropped_items.load(); }

private:
    /// The code block size of a packet of `length` input items, or 0.
    int K_of_packet(int64_t length) const;
    /// What an input item is: "bits" or "LLRs" (for messages).
    const char* unit() const;

    gr::block& m_block;
    code_block_input m_input;
    int m_K_max;
    std::string m_key_string;
    pmt::pmt_t m_key;
    gr::logger_ptr m_logger;
    int m_next_packet_items =
        0;                    ///< tagged: input items the next packet needs (0: unknown)
    int64_t m_skip_items = 0; ///< tagged: items of a dropped packet still to skip
    std::atomic<uint64_t> m_dropped_items{ 0 };
};

/// Consecutive runs of `blocks` whose input items are back to back (one core call each).
std::vector<std::pair<size_t, size_t>>
contiguous_runs(const std::vector<code_block_span>& blocks,
                const code_block_framing& framing);

} // namespace mimo_gpu
} // namespace gr

#endif
