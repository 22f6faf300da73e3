/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The coded chain through blocks: tb_source -> mimo_channel_source (the coded
// bits in) -> mimo_detector -> tb_stream_decoder -> ber_counter ("hard", one
// transport block per item), on the CPU and, with device buffers everywhere,
// on CUDA; the stream decoder on its own (tails, non-finite LLRs, tags); the
// channel source's bits input; bad parameters.

#include "test_support.h"

#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/idd_receiver.h>
#include <gnuradio/mimo_gpu/mimo_channel_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/tb_source.h>
#include <gnuradio/mimo_gpu/tb_stream_decoder.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

namespace core = ::mimo_gpu;
using gr::mimo_gpu::ber_counter;
using gr::mimo_gpu::idd_receiver;
using gr::mimo_gpu::mimo_channel_source;
using gr::mimo_gpu::mimo_detector;
using gr::mimo_gpu::tb_source;
using gr::mimo_gpu::tb_stream_decoder;
using mimo_gpu_test::fresh_seed;

// 2x2 16-QAM, two layers: 8 coded bits per received vector. A = 1000 bits on
// G = 2400 (rate ~0.43, one code block of K = 1024): 300 vectors per block.
constexpr int k_A = 1000, k_G = 2400, k_Qm = 4, k_NL = 2, k_bits_per_vector = 8;

struct chain_counts {
    uint64_t blocks = 0, crc_failures = 0, items = 0, item_errors = 0, bit_errors = 0;
};

/// tb_source -> channel -> detector -> decoder -> counter; device: CUDA with
/// device buffers on every block.
chain_counts run_chain(bool device,
                       double snr_db,
                       uint64_t blocks,
                       uint64_t seed,
                       int max_blocks = 8,
                       const std::string& code = "turbo")
{
    const std::string backend = device ? "cuda" : "cpu";
    auto tb = gr::make_top_block("coded_chain");
    auto source =
        tb_source::make(k_A, k_G, k_Qm, k_NL, 0, seed, 7, blocks, backend, device, code);
    auto channel = mimo_channel_source::make(
        2, 2, "16qam", snr_db, seed, 1, 0, backend, 4096, device, k_G);
    auto detector = mimo_detector::make(
        "nway", 2, 2, "16qam", "", 0.1, 1, backend, 2048, "erase", device);
    auto decoder = tb_stream_decoder::make(k_A,
                                           k_G,
                                           k_Qm,
                                           k_NL,
                                           0,
                                           k_bits_per_vector,
                                           "",
                                           0,
                                           0.75,
                                           64,
                                           backend,
                                           max_blocks,
                                           device,
                                           code);
    auto counter = ber_counter::make(k_A, device, "hard");
    tb->connect(source, 0, channel, 0);
    tb->connect(channel, 0, detector, 0);
    tb->connect(channel, 1, detector, 1);
    tb->connect(detector, 0, decoder, 0);
    tb->connect(source, 1, counter, 0);
    tb->connect(decoder, 0, counter, 1);
    // The coded bits as sent, on the CPU; on CUDA output 2 is left unconnected.
    auto bits_sink = gr::blocks::vector_sink_b::make(k_bits_per_vector);
    if (!device)
        tb->connect(channel, 2, bits_sink, 0);
    tb->run();
    EXPECT_EQ(decoder->active_backend(), backend);
    EXPECT_EQ(decoder->code(), code);
    EXPECT_EQ(decoder->dropped_llrs(), 0u);
    if (!device) {
        EXPECT_EQ(bits_sink->data().size(), blocks * k_G);
    }
    return { decoder->blocks(),
             decoder->crc_failures(),
             counter->items(),
             counter->item_errors(),
             counter->errors() };
}

/// code: "turbo" (LTE) or "ldpc" (NR: A = 1000 with CRC16 on G = 2400, BG2).
void expect_chain(bool device, const std::string& code = "turbo")
{
    const uint64_t seed = fresh_seed();
    // 25 dB: every block decodes.
    const chain_counts clean = run_chain(device, 25.0, 23, seed, 8, code);
    EXPECT_EQ(clean.blocks, 23u);
    EXPECT_EQ(clean.items, 23u);
    EXPECT_EQ(clean.crc_failures, 0u);
    EXPECT_EQ(clean.item_errors, 0u);
    EXPECT_EQ(clean.bit_errors, 0u);
    // 3 dB: blocks fail, and the CRC sees exactly the blocks the counter sees.
    const chain_counts noisy = run_chain(device, 3.0, 23, seed + 1, 8, code);
    EXPECT_EQ(noisy.blocks, 23u);
    EXPECT_GT(noisy.item_errors, 10u);
    EXPECT_EQ(noisy.crc_failures, noisy.item_errors);
    EXPECT_GT(noisy.bit_errors, noisy.item_errors);
    // Many blocks, two a call: the LLR buffer wraps at offsets that are no
    // multiple of a block (single-mapped on the device), and every block comes out.
    const chain_counts many = run_chain(device, 25.0, 301, seed + 2, 2, code);
    EXPECT_EQ(many.blocks, 301u);
    EXPECT_EQ(many.items, 301u);
    EXPECT_EQ(many.item_errors, 0u);
}

/// n transport blocks of the test format: their bits, and clean LLRs (+-4).
struct coded_blocks {
    std::vector<uint8_t> info;
    std::vector<float> llr;
    coded_blocks(size_t n, uint64_t seed)
    {
        core::transport_block_format f;
        f.A = k_A;
        f.G = k_G;
        f.Qm = k_Qm;
        f.NL = k_NL;
        const core::transport_block_encoder encoder(f);
        std::mt19937_64 rng(seed);
        std::vector<uint8_t> coded(k_G);
        for (size_t b = 0; b < n; ++b) {
            std::vector<uint8_t> a(k_A);
            for (auto& bit : a)
                bit = uint8_t(rng() & 1);
            encoder.encode(a.data(), coded.data());
            info.insert(info.end(), a.begin(), a.end());
            for (uint8_t c : coded)
                llr.push_back(c ? -4.0f : 4.0f);
        }
    }
};

void expect_stream_decoder(const std::string& backend, bool device)
{
    const coded_blocks blocks(11, fresh_seed());
    std::vector<float> llr = blocks.llr;
    llr[5 * k_G + 17] = std::numeric_limits<float>::quiet_NaN(); // block 5 is refused
    llr.insert(llr.end(), k_G / 2, 4.0f); // half a block at the end
    auto tb = gr::make_top_block("stream_decoder");
    auto source = gr::blocks::vector_source_f::make(llr, false, k_bits_per_vector);
    auto decoder = tb_stream_decoder::make(k_A,
                                           k_G,
                                           k_Qm,
                                           k_NL,
                                           0,
                                           k_bits_per_vector,
                                           "max-log-map",
                                           6,
                                           0.75,
                                           64,
                                           backend,
                                           4,
                                           device);
    auto sink = gr::blocks::vector_sink_b::make(k_A);
    tb->connect(source, 0, decoder, 0);
    tb->connect(decoder, 0, sink, 0);
    tb->run();
    const std::vector<uint8_t> got = sink->data();
    ASSERT_EQ(got.size(), blocks.info.size());
    for (size_t b = 0; b < 11; ++b) {
        const std::vector<uint8_t> want(blocks.info.begin() + b * k_A,
                                        blocks.info.begin() + (b + 1) * k_A);
        const std::vector<uint8_t> block(got.begin() + b * k_A,
                                         got.begin() + (b + 1) * k_A);
        if (b == 5)
            EXPECT_EQ(block, std::vector<uint8_t>(k_A, 0)) << "the refused block";
        else
            EXPECT_EQ(block, want) << "block " << b;
    }
    EXPECT_EQ(decoder->blocks(), 11u);
    EXPECT_EQ(decoder->crc_failures(), 1u);
    EXPECT_EQ(decoder->dropped_llrs(), uint64_t(k_G / 2));
    const auto tags = sink->tags();
    ASSERT_EQ(tags.size(), 1u);
    EXPECT_EQ(tags[0].offset, 5u);
    EXPECT_EQ(pmt::symbol_to_string(tags[0].key), "crc_ok");
    EXPECT_FALSE(pmt::to_bool(tags[0].value));
}

/// What an idd_receiver gave: the bits, and per item its passes and CRC verdict.
struct idd_output {
    std::vector<uint8_t> sent, bits;
    std::vector<long> passes;
    std::vector<bool> crc_ok;
    uint64_t blocks = 0, crc_failures = 0, total_passes = 0;
};

/// tb_source -> mimo_channel_source (both on the CPU: the same H and y for any
/// receiver backend) -> idd_receiver (K-best 16, 4x4 16-QAM, up to 4 passes).
idd_output run_idd(const std::string& backend, double snr_db, int blocks, uint64_t seed)
{
    constexpr int A = 1000, G = 2048;
    auto tb = gr::make_top_block("idd_chain");
    auto source = tb_source::make(A, G, 4, 4, 0, seed, 16, blocks, "cpu", false);
    auto channel = mimo_channel_source::make(
        4, 4, "16qam", snr_db, seed, 1, 0, "cpu", 4096, false, G);
    auto receiver = idd_receiver::make(
        "kbest", 4, 4, "16qam", A, G, "k=16", 0, 4, 6, 0.1, 1, backend, 8);
    auto sink = gr::blocks::vector_sink_b::make(A),
         sent = gr::blocks::vector_sink_b::make(A);
    tb->connect(source, 0, channel, 0);
    tb->connect(source, 1, sent, 0);
    tb->connect(channel, 0, receiver, 0);
    tb->connect(channel, 1, receiver, 1);
    tb->connect(receiver, 0, sink, 0);
    tb->run();
    idd_output out;
    out.bits = sink->data();
    out.sent = sent->data();
    out.passes.assign(size_t(blocks), 0);
    out.crc_ok.assign(size_t(blocks), true);
    for (const gr::tag_t& t : sink->tags()) {
        EXPECT_LT(t.offset, uint64_t(blocks));
        if (pmt::symbol_to_string(t.key) == "idd_iterations")
            out.passes[t.offset] = pmt::to_long(t.value);
        else if (pmt::symbol_to_string(t.key) == "crc_ok")
            out.crc_ok[t.offset] = pmt::to_bool(t.value);
    }
    out.blocks = receiver->blocks();
    out.crc_failures = receiver->crc_failures();
    out.total_passes = receiver->passes();
    return out;
}

} // namespace

TEST(coded_chain_cuda, idd_receiver_on_cuda_equals_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    // K-best and the turbo decoder are bit-identical on both backends, so is the
    // block (on CUDA its loop runs on device memory): bits, passes and CRCs.
    const uint64_t seed = fresh_seed();
    const idd_output cpu = run_idd("cpu", 6.0, 24, seed);
    const idd_output gpu = run_idd("cuda", 6.0, 24, seed);
    EXPECT_EQ(gpu.bits, cpu.bits);
    EXPECT_EQ(gpu.passes, cpu.passes);
    EXPECT_EQ(gpu.crc_ok, cpu.crc_ok);
    EXPECT_EQ(gpu.blocks, 24u);
    EXPECT_EQ(gpu.crc_failures, cpu.crc_failures);
    EXPECT_EQ(gpu.total_passes, cpu.total_passes);
    EXPECT_GT(cpu.total_passes, 24u); // some blocks needed feedback
    for (long p : gpu.passes)
        EXPECT_GE(p, 1);
    std::printf("[ compared ] idd_receiver kbest:16 4x4 16-QAM 6 dB: 24 blocks, %llu CRC "
                "failures, %llu passes, CUDA = CPU\n",
                (unsigned long long)gpu.crc_failures,
                (unsigned long long)gpu.total_passes);
}

TEST(coded_chain, idd_receiver_tags_every_block_with_its_passes)
{
    const idd_output out = run_idd("cpu", 6.0, 12, fresh_seed());
    EXPECT_EQ(out.blocks, 12u);
    EXPECT_EQ(out.bits.size(), 12u * 1000u);
    uint64_t sum = 0, failed = 0;
    for (size_t t = 0; t < 12; ++t) {
        EXPECT_GE(out.passes[t], 1) << t;
        EXPECT_LE(out.passes[t], 4) << t;
        sum += uint64_t(out.passes[t]);
        failed += out.crc_ok[t] ? 0 : 1;
        if (out.crc_ok[t]) { // a block that passed its CRC carries the sent bits
            EXPECT_TRUE(std::equal(out.bits.begin() + t * 1000,
                                   out.bits.begin() + (t + 1) * 1000,
                                   out.sent.begin() + t * 1000))
                << t;
        }
    }
    EXPECT_EQ(sum, out.total_passes);
    EXPECT_EQ(failed, out.crc_failures);
}

TEST(coded_chain, cpu_chain_decodes_at_high_snr_and_counts_what_the_crc_sees)
{
    expect_chain(false);
}

TEST(coded_chain_cuda, device_chain_decodes_at_high_snr_and_counts_what_the_crc_sees)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_chain(true);
}

TEST(coded_chain, ldpc_chain_decodes_at_high_snr_and_counts_what_the_crc_sees)
{
    expect_chain(false, "ldpc");
}

TEST(coded_chain_cuda, ldpc_device_chain_does_the_same)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_chain(true, "ldpc");
}

TEST(coded_chain,
     stream_decoder_keeps_every_block_fails_non_finite_ones_and_counts_the_tail)
{
    expect_stream_decoder("cpu", false);
}

TEST(coded_chain_cuda, stream_decoder_on_device_buffers_does_the_same)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_stream_decoder("cuda", false);
    expect_stream_decoder("cuda", true);
}

TEST(coded_chain, channel_source_sends_the_given_bits_through_its_own_channel)
{
    const uint64_t seed = fresh_seed();
    // 2 items of 96 bits (12 received vectors each).
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> given(2 * 96);
    for (auto& b : given)
        b = uint8_t(rng() & 1) * 3; // non-zero is 1
    auto run = [&](bool with_input) {
        auto tb = gr::make_top_block("given_bits");
        // S = 4 and 96 bits an item: 12 vectors an item, whole channels of 4
        auto channel = mimo_channel_source::make(
            2, 2, "16qam", 20.0, seed, 4, with_input ? 0 : 24, "cpu", 1000, false, 96);
        auto H = gr::blocks::vector_sink_c::make(4);
        auto bits = gr::blocks::vector_sink_b::make(8);
        auto y = gr::blocks::vector_sink_c::make(2);
        if (with_input) {
            auto source = gr::blocks::vector_source_b::make(given, false, 96);
            tb->connect(source, 0, channel, 0);
        }
        tb->connect(channel, 0, H, 0);
        tb->connect(channel, 1, y, 0);
        tb->connect(channel, 2, bits, 0);
        tb->run();
        return std::make_tuple(H->data(), y->data(), bits->data());
    };
    const auto [H_given, y_given, bits_given] = run(true);
    const auto [H_drawn, y_drawn, bits_drawn] = run(false);
    ASSERT_EQ(bits_given.size(), 2u * 96);
    for (size_t i = 0; i < bits_given.size(); ++i)
        ASSERT_EQ(bits_given[i], given[i] != 0) << i;
    EXPECT_EQ(H_given, H_drawn); // 6 channels either way, the stream's own
    EXPECT_NE(bits_given, bits_drawn);
    // y is the core generator's for the given bits.
    core::channel_generator g(
        { 2, 2 }, core::modulation::qam16, seed, 4, core::backend::cpu);
    std::vector<core::cfloat> H(6 * 4), y(24 * 2);
    g.generate(0,
               6,
               float(core::noise_variance_from_snr_db(20.0)),
               nullptr,
               H.data(),
               y.data(),
               given.data());
    ASSERT_EQ(y_given.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(y_given[i], y[i]) << "y element " << i;
}

TEST(coded_chain, channel_source_with_bits_in_stops_at_whole_items_within_its_problems)
{
    // 12 received vectors an item, problems = 30: two whole items (24 vectors), then
    // the stream ends although the input goes on (it does not spin).
    std::vector<uint8_t> given(10 * 96, 1);
    auto tb = gr::make_top_block("given_bits_problems");
    auto source = gr::blocks::vector_source_b::make(given, true, 96); // endless
    auto channel =
        mimo_channel_source::make(2, 2, "16qam", 20.0, 1, 1, 30, "cpu", 1000, false, 96);
    auto y = gr::blocks::vector_sink_c::make(2);
    tb->connect(source, 0, channel, 0);
    tb->connect(channel, 0, gr::blocks::vector_sink_c::make(4), 0);
    tb->connect(channel, 1, y, 0);
    tb->run();
    EXPECT_EQ(y->data().size(), 24u * 2);
}

/// A GPU block stand-in writing a device buffer (simulated: host memory with the
/// single-mapped buffer's wrap-around), so the stream decoder's input wraps as it
/// does on the GPU.
class single_mapped_copy : public gr::sync_block,
                           public gr::mimo_gpu::device_stream_reader
{
public:
    explicit single_mapped_copy(int vlen)
        : gr::sync_block(
              "single_mapped_copy",
              gr::io_signature::make(1, 1, vlen * sizeof(float)),
              gr::io_signature::make(
                  1, 1, vlen * sizeof(float), gr::mimo_gpu::device_buffer::type)),
          m_vlen(vlen)
    {
    }
    bool reads_device_memory() const override { return false; }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        std::copy_n(static_cast<const float*>(in[0]),
                    size_t(n) * m_vlen,
                    static_cast<float*>(out[0]));
        return n;
    }

private:
    int m_vlen;
};

/// 57 blocks and 3 items through a single-mapped buffer that wraps; on CUDA with
/// device buffers, batches in flight across work() calls while it does.
void expect_wrapping_input_keeps_every_block(const std::string& backend)
{
    gr::mimo_gpu::device_buffer::simulate_device_memory(true);
    const coded_blocks blocks(57, fresh_seed());
    std::vector<float> llr = blocks.llr;
    llr.insert(llr.end(), 3 * k_bits_per_vector, 4.0f); // and 3 items of a block more
    auto tb = gr::make_top_block("wrapping_decoder_input");
    auto source = gr::blocks::vector_source_f::make(llr, false, k_bits_per_vector);
    auto copy = std::make_shared<single_mapped_copy>(k_bits_per_vector);
    auto decoder = tb_stream_decoder::make(k_A,
                                           k_G,
                                           k_Qm,
                                           k_NL,
                                           0,
                                           k_bits_per_vector,
                                           "max-log-map",
                                           6,
                                           0.75,
                                           64,
                                           backend,
                                           2,
                                           backend == "cuda");
    auto sink = gr::blocks::vector_sink_b::make(k_A);
    tb->connect(source, 0, copy, 0);
    tb->connect(copy, 0, decoder, 0);
    tb->connect(decoder, 0, sink, 0);
    tb->run();
    gr::mimo_gpu::device_buffer::simulate_device_memory(false);
    EXPECT_EQ(sink->data(), blocks.info);
    EXPECT_EQ(decoder->blocks(), 57u);
    EXPECT_EQ(decoder->crc_failures(), 0u);
    EXPECT_EQ(decoder->dropped_llrs(), uint64_t(3 * k_bits_per_vector));
}

TEST(coded_chain, stream_decoder_on_a_wrapping_single_mapped_buffer_keeps_every_block)
{
    expect_wrapping_input_keeps_every_block("cpu");
}

TEST(coded_chain_cuda, stream_decoder_with_batches_in_flight_on_a_wrapping_buffer)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_wrapping_input_keeps_every_block("cuda");
}

/// A stream of `n` distinct blocks repeated for ever, an item a block, stopped
/// twice mid-stream (the second run after a restart): within each run the
/// decoded blocks follow the stream in order, none lost or repeated, and
/// blocks() counts at least what the sink got; on CUDA with device buffers,
/// batches in flight at the stop are not handed on in the next run.
void expect_stop_and_restart_keep_the_order(const std::string& backend)
{
    const size_t n = 16;
    const coded_blocks blocks(n, fresh_seed());
    auto tb = gr::make_top_block("stop_and_restart");
    auto source = gr::blocks::vector_source_f::make(blocks.llr, true, k_G);
    auto decoder = tb_stream_decoder::make(
        k_A, k_G, k_Qm, k_NL, 0, k_G, "max-log-map", 2, 0.75, 64, backend, 2, true);
    auto sink = gr::blocks::vector_sink_b::make(k_A);
    tb->connect(source, 0, decoder, 0);
    tb->connect(decoder, 0, sink, 0);
    uint64_t counted = 0;
    for (int run = 0; run < 2; ++run) {
        sink->reset();
        tb->start();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        tb->stop();
        tb->wait();
        const std::vector<uint8_t>& out = sink->data();
        const size_t got = out.size() / k_A;
        // Blocks handed on but still in the sink's input buffer at the stop are
        // counted and never reach the sink.
        EXPECT_GE(decoder->blocks() - counted, got) << "run " << run;
        counted = decoder->blocks();
        ASSERT_GT(got, n) << "run " << run << ": too few blocks to check the order";
        // The first block decoded tells where the run began in the stream.
        size_t first = n;
        for (size_t b = 0; b < n && first == n; ++b)
            if (std::equal(
                    out.begin(), out.begin() + k_A, blocks.info.begin() + long(b * k_A)))
                first = b;
        ASSERT_LT(first, n) << "run " << run
                            << ": the first block is none of the stream's";
        for (size_t i = 0; i < got; ++i) {
            const size_t b = (first + i) % n;
            ASSERT_TRUE(std::equal(out.begin() + long(i * k_A),
                                   out.begin() + long((i + 1) * k_A),
                                   blocks.info.begin() + long(b * k_A)))
                << "run " << run << ": block " << i << " is not the stream's next";
        }
        EXPECT_EQ(decoder->crc_failures(), 0u);
    }
}

TEST(coded_chain, stop_and_restart_keep_the_order_of_the_blocks)
{
    expect_stop_and_restart_keep_the_order("cpu");
}

TEST(coded_chain_cuda, stop_and_restart_with_batches_in_flight_keep_the_order)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_stop_and_restart_keep_the_order("cuda");
}

TEST(coded_chain, channel_source_without_bits_in_needs_its_bits_output)
{
    auto tb = gr::make_top_block("no_bits_output");
    auto channel =
        mimo_channel_source::make(2, 2, "16qam", 20.0, 1, 1, 100, "cpu", 100, false);
    tb->connect(channel, 0, gr::blocks::vector_sink_c::make(4), 0);
    tb->connect(channel, 1, gr::blocks::vector_sink_c::make(2), 0);
    EXPECT_THROW(tb->run(), std::exception);
}

TEST(coded_chain, hard_ber_counter_counts_bits_and_items)
{
    const std::vector<uint8_t> sent{ 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
    const std::vector<uint8_t> decided{ 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1 };
    auto tb = gr::make_top_block("hard_counter");
    auto counter = ber_counter::make(4, false, "hard");
    tb->connect(gr::blocks::vector_source_b::make(sent, false, 4), 0, counter, 0);
    tb->connect(gr::blocks::vector_source_b::make(decided, false, 4), 0, counter, 1);
    tb->run();
    EXPECT_EQ(counter->bits(), 12u);
    EXPECT_EQ(counter->errors(), 4u);
    EXPECT_EQ(counter->items(), 3u);
    EXPECT_EQ(counter->item_errors(), 2u);
    counter->reset();
    EXPECT_EQ(counter->item_errors(), 0u);
    EXPECT_EQ(counter->items(), 0u);
}

TEST(coded_chain, bad_parameters_are_clear_errors)
{
    EXPECT_THROW(tb_stream_decoder::make(k_A, k_G, k_Qm, k_NL, 0, 7),
                 std::invalid_argument);
    EXPECT_THROW(tb_stream_decoder::make(
                     k_A, k_G, k_Qm, k_NL, 0, 8, "max-log-map", 6, 0.75, 64, "cpu", -1),
                 std::invalid_argument);
    // On the CPU, device buffers are not used (the default asks for them on CUDA).
    EXPECT_FALSE(
        tb_stream_decoder::make(
            k_A, k_G, k_Qm, k_NL, 0, 8, "max-log-map", 6, 0.75, 64, "cpu", 8, true)
            ->device_buffers());
    // max_blocks 0: chosen from G (up to about 2^22 LLRs a call, 1..256 blocks).
    EXPECT_EQ(tb_stream_decoder::make(
                  k_A, k_G, k_Qm, k_NL, 0, 8, "max-log-map", 6, 0.75, 64, "cpu")
                  ->max_blocks(),
              std::clamp((1 << 22) / k_G, 1, 256));
    // NR 100 MHz 4x4 16-QAM frames' blocks (G = 1 362 816): three a call, no error.
    EXPECT_EQ(tb_stream_decoder::make(
                  681384, 1362816, 4, 1, 0, 16, "max-log-map", 6, 0.75, 64, "cpu")
                  ->max_blocks(),
              3);
    EXPECT_THROW(tb_stream_decoder::make(k_A, k_G + 1, k_Qm, k_NL, 0, 1),
                 std::invalid_argument);
    EXPECT_THROW(tb_source::make(k_A, k_G, k_Qm, k_NL, 0, 1, 0), std::invalid_argument);
    EXPECT_THROW(tb_source::make(k_A, k_G, k_Qm, k_NL, 4), std::invalid_argument);
    EXPECT_THROW(ber_counter::make(8, false, "soft"), std::invalid_argument);
    EXPECT_THROW(
        mimo_channel_source::make(2, 2, "16qam", 10, 1, 1, 0, "cpu", 100, false, 12),
        std::invalid_argument);
    EXPECT_THROW(
        mimo_channel_source::make(2, 2, "16qam", 10, 1, 1, 0, "cpu", 100, false, -8),
        std::invalid_argument);
    // S = 8191 and items of 8191 * 8 ... : units beyond 2^24 received vectors
    EXPECT_THROW(mimo_channel_source::make(
                     2, 2, "16qam", 10, 1, 8191, 0, "cpu", 100, false, 8 * 8192),
                 std::invalid_argument);
    EXPECT_THROW(
        tb_stream_decoder::make(
            k_A, k_G, k_Qm, k_NL, 0, 8, "max-log-map", 6, 0.75, 64, "cpu", 1 << 16),
        std::invalid_argument);
    auto decoder = tb_stream_decoder::make(k_A, k_G, k_Qm, k_NL, 0, 8);
    EXPECT_THROW(decoder->set_rv(4), std::invalid_argument);
    decoder->set_rv(3);
    EXPECT_EQ(decoder->rv(), 3);
    if (!core::cuda_available()) {
        EXPECT_THROW(tb_source::make(k_A, k_G, k_Qm, k_NL, 0, 1, 4, 0, "cuda"),
                     std::exception);
    }
}
