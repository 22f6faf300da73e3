/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The turbo blocks in a real top_block, on each backend: random bits ->
// turbo_encoder -> BPSK LLRs 8 (1 - 2b) (char_to_float, multiply_const -16,
// add_const 8) -> turbo_decoder -> vector_sink, for fixed K and for
// length-tagged packets of mixed K; and transport block PDUs through
// tb_encoder -> LLRs -> tb_decoder. Every bit must come back. The CUDA case is
// what runs on the GPU machine; it skips without a GPU.

#include <gnuradio/blocks/add_const_ff.h>
#include <gnuradio/blocks/char_to_float.h>
#include <gnuradio/blocks/multiply_const.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/hier_block2.h>
#include <gnuradio/mimo_gpu/tb_decoder.h>
#include <gnuradio/mimo_gpu/tb_encoder.h>
#include <gnuradio/mimo_gpu/turbo_decoder.h>
#include <gnuradio/mimo_gpu/turbo_encoder.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <pmt/pmt.h>

#include "backend_test.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

class turbo_flowgraph : public backend_test
{
protected:
    /// bits -> turbo_encoder -> LLRs -> turbo_decoder (K, key) -> returned sink.
    gr::blocks::vector_sink_b::sptr
    run_chain(const std::vector<uint8_t>& bits,
              const std::vector<gr::tag_t>& tags,
              int K,
              const std::string& key,
              const std::string& crc,
              gr::mimo_gpu::turbo_decoder::sptr* decoder_out)
    {
        auto tb = gr::make_top_block("turbo_flowgraph");
        auto source = gr::blocks::vector_source_b::make(bits, false, 1, tags);
        auto encoder = gr::mimo_gpu::turbo_encoder::make(K, key);
        auto to_float = gr::blocks::char_to_float::make(1, 1.0f);
        auto scale = gr::blocks::multiply_const_ff::make(-16.0f);
        auto offset = gr::blocks::add_const_ff::make(8.0f);
        auto decoder = gr::mimo_gpu::turbo_decoder::make(
            K, key, "max-log-map", 6, 0.75, 64, crc, backend(), 64);
        auto sink = gr::blocks::vector_sink_b::make();
        EXPECT_EQ(decoder->active_backend(), backend());
        tb->connect(source, 0, encoder, 0);
        tb->connect(encoder, 0, to_float, 0);
        tb->connect(to_float, 0, scale, 0);
        tb->connect(scale, 0, offset, 0);
        tb->connect(offset, 0, decoder, 0);
        tb->connect(decoder, 0, sink, 0);
        tb->run();
        if (decoder_out)
            *decoder_out = decoder;
        return sink;
    }
};

std::vector<gr::tag_t> length_tags(const std::vector<int>& lengths,
                                   const std::string& key)
{
    std::vector<gr::tag_t> tags;
    uint64_t offset = 0;
    for (int length : lengths) {
        gr::tag_t tag;
        tag.offset = offset;
        tag.key = pmt::intern(key);
        tag.value = pmt::from_long(length);
        tags.push_back(tag);
        offset += length;
    }
    return tags;
}

/// (offset, value) of the sink's tags of `key`.
std::map<uint64_t, pmt::pmt_t> tags_of(const gr::blocks::vector_sink_b::sptr& sink,
                                       const std::string& key)
{
    std::map<uint64_t, pmt::pmt_t> found;
    for (const auto& tag : sink->tags())
        if (pmt::eq(tag.key, pmt::intern(key)))
            found[tag.offset] = tag.value;
    return found;
}

TEST_P(turbo_flowgraph, fixed_k_returns_every_bit_and_leaves_a_partial_block)
{
    const int K = 2048, blocks = 37; // not a multiple of max_blocks (64) or of a buffer
    auto bits = random_bits(size_t(K) * blocks + 1000, 1);
    // Code block CRC24B on each block, for the crc_ok tags.
    for (int b = 0; b < blocks; ++b)
        ::mimo_gpu::crc_attach(::mimo_gpu::crc_type::crc24b,
                               bits.data() + size_t(b) * K,
                               K - 24,
                               bits.data() + size_t(b) * K);
    const auto sink = run_chain(bits, {}, K, "", "crc24b", nullptr);

    const std::vector<uint8_t> expected(bits.begin(), bits.begin() + size_t(K) * blocks);
    EXPECT_EQ(sink->data(), expected);
    const auto crc_ok = tags_of(sink, "crc_ok");
    const auto iterations = tags_of(sink, "iterations");
    ASSERT_EQ(crc_ok.size(), size_t(blocks));
    ASSERT_EQ(iterations.size(), size_t(blocks));
    for (int b = 0; b < blocks; ++b) {
        const uint64_t offset = uint64_t(b) * K;
        ASSERT_EQ(crc_ok.count(offset), 1u);
        EXPECT_TRUE(pmt::to_bool(crc_ok.at(offset)));
        EXPECT_LE(pmt::to_long(iterations.at(offset)), 6);
    }
}

TEST_P(turbo_flowgraph, tagged_mixed_k_returns_every_bit)
{
    const std::string key = "packet_len";
    std::vector<int> sizes;
    const auto& table = ::mimo_gpu::qpp_interleaver::block_sizes();
    std::mt19937 rng(2);
    for (int p = 0; p < 150; ++p)
        sizes.push_back(table[rng() % table.size()]);
    sizes.push_back(6144);
    sizes.push_back(40);
    const size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t(0));
    const auto bits = random_bits(total, 3);
    const auto sink =
        run_chain(bits, length_tags(sizes, key), 6144, key, "none", nullptr);

    EXPECT_EQ(sink->data(), bits);
    const auto lengths = tags_of(sink, key);
    ASSERT_EQ(lengths.size(), sizes.size());
    uint64_t offset = 0;
    for (int K : sizes) {
        ASSERT_EQ(lengths.count(offset), 1u);
        EXPECT_EQ(pmt::to_long(lengths.at(offset)), K);
        offset += K;
    }
    EXPECT_EQ(tags_of(sink, "iterations").size(), sizes.size());
}

/// Turns a PDU of bits into a PDU of LLRs 8 (1 - 2b); every `flip`-th one gets
/// its signs flipped (it must fail its CRC).
class bits_to_llr_pdu : public gr::block
{
public:
    explicit bits_to_llr_pdu(int flip)
        : gr::block("bits_to_llr_pdu",
                    gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0)),
          d_flip(flip)
    {
        message_port_register_in(pmt::mp("in"));
        message_port_register_out(pmt::mp("out"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& pdu) {
            const auto bits = pmt::u8vector_elements(pmt::cdr(pdu));
            const float sign = (++d_count % d_flip == 0) ? -1.0f : 1.0f;
            std::vector<float> llr(bits.size());
            for (size_t i = 0; i < bits.size(); ++i)
                llr[i] = sign * (bits[i] ? -8.0f : 8.0f);
            message_port_pub(
                pmt::mp("out"),
                pmt::cons(pmt::car(pdu), pmt::init_f32vector(llr.size(), llr)));
        });
    }

private:
    int d_flip;
    int d_count = 0;
};

/// Collects the PDUs of its "in" port.
class pdu_collector : public gr::block
{
public:
    pdu_collector()
        : gr::block("pdu_collector",
                    gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0))
    {
        message_port_register_in(pmt::mp("in"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& pdu) {
            gr::thread::scoped_lock lock(d_mutex);
            d_pdus.push_back(pdu);
        });
    }
    std::vector<pmt::pmt_t> pdus()
    {
        gr::thread::scoped_lock lock(d_mutex);
        return d_pdus;
    }

private:
    gr::thread::mutex d_mutex;
    std::vector<pmt::pmt_t> d_pdus;
};

TEST_P(turbo_flowgraph, transport_block_pdus_round_trip_and_report_crc)
{
    const int A = 12000, G = 36000, Qm = 2, count = 20, flip = 7; // A: 2 code blocks
    auto tb = gr::make_top_block("tb_flowgraph");
    auto encoder = gr::mimo_gpu::tb_encoder::make(A, G, Qm);
    auto to_llr = gnuradio::make_block_sptr<bits_to_llr_pdu>(flip);
    auto decoder = gr::mimo_gpu::tb_decoder::make(
        A, G, Qm, 1, 0, "max-log-map", 6, 0.75, 64, backend(), 8);
    auto collector = gnuradio::make_block_sptr<pdu_collector>();
    EXPECT_EQ(decoder->active_backend(), backend());
    tb->msg_connect(encoder, "out", to_llr, "in");
    tb->msg_connect(to_llr, "out", decoder, "in");
    tb->msg_connect(decoder, "out", collector, "in");

    std::vector<std::vector<uint8_t>> data;
    for (int n = 0; n < count; ++n) {
        data.push_back(random_bits(A, 100 + n));
        const auto meta =
            pmt::dict_add(pmt::make_dict(), pmt::mp("seq"), pmt::from_long(n));
        encoder->_post(pmt::mp("in"),
                       pmt::cons(meta, pmt::init_u8vector(A, data.back())));
    }
    tb->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (collector->pdus().size() < size_t(count) &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    tb->stop();
    tb->wait();

    const auto pdus = collector->pdus();
    ASSERT_EQ(pdus.size(), size_t(count));
    for (const auto& pdu : pdus) {
        const auto meta = pmt::car(pdu);
        const long n = pmt::to_long(pmt::dict_ref(meta, pmt::mp("seq"), pmt::PMT_NIL));
        const bool crc_ok =
            pmt::to_bool(pmt::dict_ref(meta, pmt::mp("crc_ok"), pmt::PMT_NIL));
        EXPECT_EQ(pmt::to_long(pmt::dict_ref(meta, pmt::mp("code_blocks"), pmt::PMT_NIL)),
                  2);
        if ((n + 1) % flip == 0) {
            EXPECT_FALSE(crc_ok) << "transport block " << n << " had its LLRs flipped";
        } else {
            EXPECT_TRUE(crc_ok) << "transport block " << n;
            EXPECT_EQ(pmt::u8vector_elements(pmt::cdr(pdu)), data[n]);
        }
    }
}

/// The LLRs (+-8, positive means 0) of code block `bits` (K of them), [d0 | d1 | d2].
std::vector<float> codeword_llrs(const std::vector<uint8_t>& bits)
{
    const int K = static_cast<int>(bits.size());
    std::vector<uint8_t> d(3 * size_t(K + 4));
    ::mimo_gpu::turbo_encode(
        bits.data(), K, d.data(), d.data() + K + 4, d.data() + 2 * size_t(K + 4));
    std::vector<float> llr(d.size());
    for (size_t i = 0; i < d.size(); ++i)
        llr[i] = d[i] ? -8.0f : 8.0f;
    return llr;
}

/// LLRs (with tags) -> turbo_decoder -> returned sink; the decoder in *decoder_out.
gr::blocks::vector_sink_b::sptr
run_decoder(const std::vector<float>& llr,
            const std::vector<gr::tag_t>& tags,
            int K,
            const std::string& key,
            const std::string& crc,
            const std::string& backend,
            gr::mimo_gpu::turbo_decoder::sptr* decoder_out)
{
    auto tb = gr::make_top_block("turbo_decoder_flowgraph");
    auto source = gr::blocks::vector_source_f::make(llr, false, 1, tags);
    auto decoder = gr::mimo_gpu::turbo_decoder::make(
        K, key, "max-log-map", 6, 0.75, 64, crc, backend, 64);
    auto sink = gr::blocks::vector_sink_b::make();
    tb->connect(source, 0, decoder, 0);
    tb->connect(decoder, 0, sink, 0);
    tb->run();
    *decoder_out = decoder;
    return sink;
}

// A partial code block at the end of an untagged stream used to vanish without a
// word: it is counted (and logged as a warning) when the flowgraph stops.
TEST_P(turbo_flowgraph, leftover_untagged_llrs_are_counted_as_dropped)
{
    const int K = 40;
    std::vector<float> llr;
    std::vector<uint8_t> expected;
    for (int b = 0; b < 3; ++b) {
        const auto bits = random_bits(K, 10 + b);
        const auto l = codeword_llrs(bits);
        llr.insert(llr.end(), l.begin(), l.end());
        expected.insert(expected.end(), bits.begin(), bits.end());
    }
    llr.insert(llr.end(), 100, 8.0f); // 100 of the 132 LLRs of a fourth block
    gr::mimo_gpu::turbo_decoder::sptr decoder;
    const auto sink = run_decoder(llr, {}, K, "", "none", backend(), &decoder);
    EXPECT_EQ(sink->data(), expected);
    EXPECT_EQ(decoder->dropped_llrs(), 100u);
}

// Tagged: LLRs before the first length tag and a packet cut short by the end of
// the stream are dropped, counted, and the packets in between decoded.
TEST_P(turbo_flowgraph, untagged_and_cut_short_llrs_are_counted_as_dropped)
{
    const std::string key = "packet_len";
    std::vector<float> llr(50, 8.0f); // no tag on these
    std::vector<gr::tag_t> tags;
    std::vector<uint8_t> expected;
    auto add_packet = [&](const std::vector<float>& l, size_t length) {
        gr::tag_t tag;
        tag.offset = llr.size();
        tag.key = pmt::intern(key);
        tag.value = pmt::from_long(static_cast<long>(length));
        tags.push_back(tag);
        llr.insert(llr.end(), l.begin(), l.end());
    };
    for (int K : { 40, 104 }) {
        const auto bits = random_bits(K, K);
        const auto l = codeword_llrs(bits);
        add_packet(l, l.size());
        expected.insert(expected.end(), bits.begin(), bits.end());
    }
    add_packet(std::vector<float>(60, 8.0f), 3 * (40 + 4)); // 60 of its 132 LLRs
    gr::mimo_gpu::turbo_decoder::sptr decoder;
    const auto sink = run_decoder(llr, tags, 6144, key, "none", backend(), &decoder);
    EXPECT_EQ(sink->data(), expected);
    EXPECT_EQ(decoder->dropped_llrs(), 50u + 60u);
}

// An erased code block (all-zero LLRs) decodes to zeros, whose CRC passes: it
// must be tagged no_information and crc_ok false, never crc_ok true.
TEST_P(turbo_flowgraph, erased_code_block_is_tagged_no_information)
{
    const int K = 1024;
    auto bits = random_bits(K, 30);
    ::mimo_gpu::crc_attach(
        ::mimo_gpu::crc_type::crc24b, bits.data(), K - 24, bits.data());
    auto llr = codeword_llrs(bits);
    llr.insert(llr.end(), 3 * size_t(K + 4), 0.0f); // block 1: erased
    gr::mimo_gpu::turbo_decoder::sptr decoder;
    const auto sink = run_decoder(llr, {}, K, "", "crc24b", backend(), &decoder);
    ASSERT_EQ(sink->data().size(), 2 * size_t(K));
    EXPECT_TRUE(std::equal(bits.begin(), bits.end(), sink->data().begin()));
    const auto crc_ok = tags_of(sink, "crc_ok");
    const auto no_information = tags_of(sink, "no_information");
    ASSERT_EQ(crc_ok.size(), 2u);
    EXPECT_TRUE(pmt::to_bool(crc_ok.at(0)));
    EXPECT_FALSE(pmt::to_bool(crc_ok.at(K)));
    ASSERT_EQ(no_information.size(), 1u);
    ASSERT_EQ(no_information.count(K), 1u);
    EXPECT_TRUE(pmt::to_bool(no_information.at(K)));
    EXPECT_EQ(decoder->dropped_llrs(), 0u);
}

// A transport block PDU of all-zero LLRs: crc_ok false, every code block without
// information.
TEST_P(turbo_flowgraph, erased_transport_block_fails_its_crc)
{
    const int A = 7000, G = 18000, Qm = 2; // two code blocks
    auto tb = gr::make_top_block("tb_erased");
    auto decoder = gr::mimo_gpu::tb_decoder::make(
        A, G, Qm, 1, 0, "max-log-map", 4, 0.75, 64, backend(), 8);
    auto collector = gnuradio::make_block_sptr<pdu_collector>();
    tb->msg_connect(decoder, "out", collector, "in");
    decoder->_post(
        pmt::mp("in"),
        pmt::cons(pmt::make_dict(), pmt::init_f32vector(G, std::vector<float>(G, 0.0f))));
    tb->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (collector->pdus().empty() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tb->stop();
    tb->wait();
    const auto pdus = collector->pdus();
    ASSERT_EQ(pdus.size(), 1u);
    const auto meta = pmt::car(pdus[0]);
    EXPECT_FALSE(pmt::to_bool(pmt::dict_ref(meta, pmt::mp("crc_ok"), pmt::PMT_NIL)));
    EXPECT_EQ(pmt::to_long(pmt::dict_ref(meta, pmt::mp("code_blocks"), pmt::PMT_NIL)), 2);
    EXPECT_EQ(
        pmt::to_long(pmt::dict_ref(meta, pmt::mp("code_blocks_crc_ok"), pmt::PMT_NIL)),
        0);
    EXPECT_EQ(pmt::to_long(pmt::dict_ref(
                  meta, pmt::mp("code_blocks_no_information"), pmt::PMT_NIL)),
              2);
}

TEST(turbo_block_parameters, bad_parameters_throw_invalid_argument)
{
    EXPECT_THROW(gr::mimo_gpu::turbo_encoder::make(41), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::turbo_decoder::make(40, "", "map"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::turbo_decoder::make(40, "", "log-map", 0),
                 std::invalid_argument);
    EXPECT_THROW(
        gr::mimo_gpu::turbo_decoder::make(40, "", "log-map", 6, 0.75, 64, "crc32"),
        std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::tb_encoder::make(100, 601, 2), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::tb_decoder::make(100, 600, 3), std::invalid_argument);
    // G far too small for A: 2 coded bits for 124 bits of data and CRC.
    EXPECT_THROW(gr::mimo_gpu::tb_decoder::make(100, 2, 2), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::tb_decoder::make(100, 122, 2), std::invalid_argument);
    EXPECT_NO_THROW(gr::mimo_gpu::tb_decoder::make(100, 124, 2));
}

INSTANTIATE_TEST_SUITE_P(backends,
                         turbo_flowgraph,
                         ::testing::Values("cpu", "cuda"),
                         [](const auto& info) { return info.param; });

} // namespace
