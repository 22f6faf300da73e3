// The OFDM front end as GNU Radio blocks: ofdm_tx -> ofdm_channel_model ->
// ofdm_rx -> mimo_detector in real flowgraphs, on the CPU and (where usable)
// CUDA: frames decoded with their bits, several frames in a stream, a stream
// cut inside its last frame, noise alone, and bad parameters.
#include "test_support.h"

#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_source.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/ofdm_channel_model.h>
#include <gnuradio/mimo_gpu/ofdm_rx.h>
#include <gnuradio/mimo_gpu/ofdm_tx.h>
#include <gnuradio/mimo_gpu/sigmf_file_sink.h>
#include <gnuradio/mimo_gpu/sigmf_file_source.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/sigmf.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

struct chain_case {
    int nt, nr;
    std::string backend;
};

class ofdm_flowgraph : public ::testing::TestWithParam<chain_case>
{
protected:
    void SetUp() override
    {
        if (GetParam().backend == "cuda" && !mimo_gpu::cuda_available())
            GTEST_SKIP() << "no usable CUDA device";
    }
};

std::vector<uint8_t> random_bits(size_t n, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> b(n);
    for (auto& v : b)
        v = uint8_t(rng() & 1);
    return b;
}

} // namespace

TEST_P(ofdm_flowgraph, frames_through_tx_channel_rx_and_detector_have_their_bits_at_30_db)
{
    const chain_case c = GetParam();
    const int frames = 4, D = 6, Q = 4;
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", c.nt, "16qam", 2, D);
    const std::vector<uint8_t> bits = random_bits(size_t(frames) * tx->frame_bits(), 11);
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte1.4", c.nt, c.nr, 2, D, "eva", 30.0, 0.3, 150, 5);
    auto rx = gr::mimo_gpu::ofdm_rx::make("lte1.4", c.nt, c.nr, "16qam", 2, D, "hold", "lmmse", c.backend);
    // N-way with nt passes (near max-log ML): uncoded errors at 30 dB come from the channel estimates.
    auto det = gr::mimo_gpu::mimo_detector::make("nway", c.nr, c.nt, "16qam", "passes=" + std::to_string(c.nt), 1.0,
                                                 rx->symbols_per_channel(), c.backend);
    auto sink = gr::blocks::vector_sink_f::make(c.nt * Q);
    auto tb = gr::make_top_block("ofdm_chain");
    tb->connect(source, 0, tx, 0);
    for (int t = 0; t < c.nt; ++t)
        tb->connect(tx, t, channel, t);
    for (int r = 0; r < c.nr; ++r)
        tb->connect(channel, r, rx, r);
    tb->connect(rx, 0, det, 0);
    tb->connect(rx, 1, det, 1);
    tb->connect(det, 0, sink, 0);
    tb->run();
    const std::vector<float>& llr = sink->data();
    ASSERT_EQ(llr.size(), bits.size()) << "every frame received, nothing invented";
    size_t errors = 0;
    for (size_t k = 0; k < bits.size(); ++k)
        errors += (llr[k] < 0) != (bits[k] != 0);
    EXPECT_LT(double(errors) / double(bits.size()), 1e-2) << errors << " bit errors";
    EXPECT_EQ(rx->frames_received(), uint64_t(frames));
    EXPECT_NEAR(rx->last_cfo(), 0.3, 0.05);
    // noise_var tags: one per frame on y, N0 near 1e-3 (30 dB)
    std::printf("[ measured ] %dx%d %s: %d frames, %zu of %zu bits wrong before decoding, last N0 %.2e\n", c.nr,
                c.nt, c.backend.c_str(), frames, errors, bits.size(), rx->last_noise_var());
    EXPECT_GT(rx->last_noise_var(), 5e-4);
    EXPECT_LT(rx->last_noise_var(), 5e-3);
}

TEST_P(ofdm_flowgraph, a_stream_cut_in_its_last_frame_gives_whole_frames_only)
{
    const chain_case c = GetParam();
    const int D = 6;
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", c.nt, "16qam", 2, D);
    const std::vector<uint8_t> bits = random_bits(3 * size_t(tx->frame_bits()), 12);
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte1.4", c.nt, c.nr, 2, D, "epa", 30.0, 0.0, 40, 6);
    // Cut the third frame short on every antenna: two whole frames come out.
    const int out_per_frame = tx->frame_samples() + 40 + 1; // offset + EPA spread (1 sample at 1.92 MHz)
    auto rx = gr::mimo_gpu::ofdm_rx::make("lte1.4", c.nt, c.nr, "16qam", 2, D, "hold", "lmmse", c.backend);
    auto H_sink = gr::blocks::vector_sink_c::make(c.nr * c.nt);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("ofdm_cut");
    tb->connect(source, 0, tx, 0);
    for (int t = 0; t < c.nt; ++t)
        tb->connect(tx, t, channel, t);
    for (int r = 0; r < c.nr; ++r) {
        auto head = gr::blocks::head::make(sizeof(gr_complex), uint64_t(2 * out_per_frame + out_per_frame / 2));
        tb->connect(channel, r, head, 0);
        tb->connect(head, 0, rx, r);
    }
    tb->connect(rx, 0, H_sink, 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    const size_t y_per_frame = 2 * 72 * D;
    EXPECT_EQ(y_sink->data().size(), 2 * y_per_frame * c.nr);
    EXPECT_EQ(H_sink->data().size(), 2 * 2 * 72 * size_t(c.nr * c.nt));
    EXPECT_EQ(rx->frames_received(), 2u);
    // each frame's first y item carries its noise_var tag
    size_t noise_tags = 0;
    for (const auto& tag : y_sink->tags())
        if (pmt::symbol_to_string(tag.key) == "noise_var") {
            EXPECT_EQ(tag.offset % y_per_frame, 0u);
            ++noise_tags;
        }
    EXPECT_EQ(noise_tags, 2u);
}

TEST_P(ofdm_flowgraph, noise_alone_gives_nothing_and_ends)
{
    const chain_case c = GetParam();
    std::mt19937_64 rng(3);
    std::normal_distribution<float> g(0.0f, 0.7f);
    std::vector<gr_complex> noise(20000);
    for (auto& v : noise)
        v = gr_complex(g(rng), g(rng));
    auto rx = gr::mimo_gpu::ofdm_rx::make("lte1.4", c.nt, c.nr, "16qam", 2, 6, "hold", "lmmse", c.backend);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto H_sink = gr::blocks::vector_sink_c::make(c.nr * c.nt);
    auto tb = gr::make_top_block("ofdm_noise");
    for (int r = 0; r < c.nr; ++r)
        tb->connect(gr::blocks::vector_source_c::make(noise), 0, rx, r);
    tb->connect(rx, 0, H_sink, 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    EXPECT_TRUE(y_sink->data().empty());
    EXPECT_EQ(rx->frames_received(), 0u);
}

INSTANTIATE_TEST_SUITE_P(shapes_and_backends,
                         ofdm_flowgraph,
                         ::testing::Values(chain_case{ 2, 2, "cpu" }, chain_case{ 4, 4, "cpu" },
                                           chain_case{ 2, 2, "cuda" }, chain_case{ 4, 4, "cuda" }),
                         [](const ::testing::TestParamInfo<chain_case>& i) {
                             return std::to_string(i.param.nr) + "x" + std::to_string(i.param.nt) + "_" +
                                    i.param.backend;
                         });

TEST(ofdm_blocks, bad_parameters_are_invalid_argument)
{
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte7"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 9), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 2, "8psk"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make("lte1.4", 2, 2, 2, 6, "tdl-z"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make("lte1.4", 2, 2, 2, 6, "epa", 20, 0, -1),
                 std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 4, 2), std::invalid_argument); // nr < nt
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 2, 6, "cubic"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 2, 6, "hold", "spline"),
                 std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 0, 6), std::invalid_argument);
}

TEST(sigmf_blocks, a_recorded_stream_plays_back_and_decodes_as_live)
{
    // tx -> channel -> (a) rx -> detector live, (b) sigmf_file_sink; then
    // sigmf_file_source -> rx -> detector: the same LLRs (cf32 is exact).
    const int nt = 2, nr = 2, D = 6, Q = 4;
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", nt, "16qam", 2, D);
    const std::vector<uint8_t> bits = random_bits(3 * size_t(tx->frame_bits()), 21);
    const std::string base = ::testing::TempDir() + "mimo_gpu_block_recording";
    auto chain = [&](gr::top_block_sptr tb, gr::basic_block_sptr upstream, bool from_file) {
        auto rx = gr::mimo_gpu::ofdm_rx::make("lte1.4", nt, nr, "16qam", 2, D, "hold", "lmmse", "cpu");
        auto det = gr::mimo_gpu::mimo_detector::make("mmse", nr, nt, "16qam", "", 1.0, rx->symbols_per_channel(), "cpu");
        auto sink = gr::blocks::vector_sink_f::make(nt * Q);
        for (int r = 0; r < nr; ++r)
            tb->connect(upstream, r, rx, r);
        tb->connect(rx, 0, det, 0);
        tb->connect(rx, 1, det, 1);
        tb->connect(det, 0, sink, 0);
        (void)from_file;
        return sink;
    };
    std::vector<float> live;
    {
        auto tb = gr::make_top_block("record");
        auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
        auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte1.4", nt, nr, 2, D, "epa", 25.0, 0.2, 60, 8);
        auto recorder = gr::mimo_gpu::sigmf_file_sink::make(base, nr, 1.92e6, 2.45e9, "cf32", 1.0, "lte1.4", nt,
                                                            "16qam", 2, D, "block test");
        tb->connect(source, 0, tx, 0);
        for (int t = 0; t < nt; ++t)
            tb->connect(tx, t, channel, t);
        for (int r = 0; r < nr; ++r)
            tb->connect(channel, r, recorder, r);
        auto sink = chain(tb, channel, false);
        tb->run();
        live = sink->data();
        EXPECT_GT(recorder->samples_written(), 3u * uint64_t(tx->frame_samples()));
    }
    ASSERT_EQ(live.size(), bits.size());
    auto tb = gr::make_top_block("play");
    auto player = gr::mimo_gpu::sigmf_file_source::make(base, nr);
    EXPECT_EQ(player->sample_rate(), 1.92e6);
    auto sink = chain(tb, player, true);
    tb->run();
    EXPECT_EQ(sink->data(), live) << "the recording decodes as the live stream";
    // a recording of 2 channels refused by a 4-channel source, a missing one too
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_source::make(base, 4), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_source::make(base + "_missing", 2), std::runtime_error);
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_sink::make(base, 2, 1e6, 0, "ri8"), std::invalid_argument);
}

TEST(sigmf_blocks, a_ci16_sink_counts_what_it_clips)
{
    // Two channels at full scale 1.0: every value beyond +-1 is clipped, counted
    // by the block and recorded in the meta; the rest round-trip to int16.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    std::normal_distribution<float> gauss(0.0f, 0.6f);
    std::vector<gr_complex> a(5000), b(5000);
    uint64_t beyond = 0;
    for (auto* v : { &a, &b })
        for (auto& x : *v) {
            x = gr_complex(gauss(rng), gauss(rng));
            // clipped: beyond int16 after rounding (|x| a hair above 1 rounds to 32767)
            beyond += (std::abs(std::round(x.real() * 32767.0f)) > 32767.0f) +
                      (std::abs(std::round(x.imag() * 32767.0f)) > 32767.0f);
        }
    ASSERT_GT(beyond, 0u);
    const std::string base = ::testing::TempDir() + "mimo_gpu_block_clipped";
    auto tb = gr::make_top_block("clip");
    auto sink = gr::mimo_gpu::sigmf_file_sink::make(base, 2, 1e6, 0, "ci16", 1.0);
    tb->connect(gr::blocks::vector_source_c::make(a), 0, sink, 0);
    tb->connect(gr::blocks::vector_source_c::make(b), 0, sink, 1);
    tb->run();
    EXPECT_EQ(sink->samples_written(), 5000u);
    EXPECT_EQ(sink->values_clipped(), beyond);
    ::mimo_gpu::sigmf_reader reader(base);
    EXPECT_EQ(reader.meta().ci16_values_clipped, beyond);
    std::vector<gr_complex> back(10000);
    ASSERT_EQ(reader.read(back.data(), 5000), 5000u);
    for (size_t k = 0; k < 5000; ++k)
        for (int c = 0; c < 2; ++c) {
            const gr_complex want = (c == 0 ? a : b)[k];
            const gr_complex got = back[2 * k + size_t(c)];
            EXPECT_NEAR(got.real(), std::max(-1.0f, std::min(1.0f, want.real())), 1e-4f);
            EXPECT_NEAR(got.imag(), std::max(-1.0f, std::min(1.0f, want.imag())), 1e-4f);
        }
}
