// The OFDM front end as GNU Radio blocks: ofdm_tx -> ofdm_channel_model ->
// ofdm_rx -> mimo_detector in real flowgraphs, on the CPU and (where usable)
// CUDA: frames decoded with their bits, several frames in a stream, a stream
// cut inside its last frame, noise alone, and bad parameters.
#include "test_support.h"

#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/null_source.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/ofdm_channel_model.h>
#include <gnuradio/mimo_gpu/ofdm_rx.h>
#include <gnuradio/mimo_gpu/ofdm_tx.h>
#include <gnuradio/mimo_gpu/sigmf_file_sink.h>
#include <gnuradio/mimo_gpu/sigmf_file_source.h>
#include <gnuradio/mimo_gpu/tb_source.h>
#include <gnuradio/mimo_gpu/tb_stream_decoder.h>
#include <gnuradio/top_block.h>
#include <gtest/gtest.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_transmitter.h>
#include <mimo_gpu/sigmf.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

/// Stream i of `from` into input i of `to`, for each of `count` antennas.
void connect_antennas(const gr::top_block_sptr& tb,
                      const gr::basic_block_sptr& from,
                      const gr::basic_block_sptr& to,
                      int count)
{
    for (int i = 0; i < count; ++i)
        tb->connect(from, i, to, i);
}

struct chain_case {
    int nt, nr;
    std::string backend;
};

class ofdm_flowgraph : public ::testing::TestWithParam<chain_case>
{
protected:
    void SetUp() override
    {
        if (GetParam().backend == "cuda") {
            MIMO_GPU_REQUIRE_CUDA();
        }
    }
};

/// Frames (each one transport block, A bits at rate ~1/3 onto the frame's G
/// bits) through a multipath channel, back to back: one sample vector per
/// antenna, and each frame's information bits.
struct recorded_frames {
    mimo_gpu::ofdm_grid grid;
    mimo_gpu::transport_block_format format;
    std::vector<std::vector<gr_complex>> antennas;
    std::vector<std::vector<uint8_t>> information;

    recorded_frames(const std::string& preset, int nt, int nr, int frames, uint64_t seed)
        : grid(mimo_gpu::ofdm_grid::preset(preset))
    {
        grid.nt = nt;
        grid.slots = 2;
        grid.data_symbols = 6;
        format.G = int(grid.frame_bits());
        format.Qm = 4;
        format.A = format.G / 3 - 24;
        const mimo_gpu::transport_block_encoder encoder(format);
        mimo_gpu::ofdm_transmitter tx(grid);
        mimo_gpu::multipath_config mc;
        mc.nr = nr;
        mc.nt = nt;
        mc.profile = mimo_gpu::delay_profile::epa;
        mc.sample_rate = grid.sample_rate;
        mc.cfo = 0.1 * grid.subcarrier_spacing();
        mc.timing_offset = 20;
        mc.snr_db = 30;
        mc.seed = seed;
        mimo_gpu::multipath_channel channel(mc);
        antennas.assign(size_t(nr), {});
        std::vector<uint8_t> coded(size_t(format.G));
        std::vector<gr_complex> samples(size_t(grid.frame_samples()) * nt),
            received(channel.output_samples(size_t(grid.frame_samples())) * nr);
        for (int f = 0; f < frames; ++f) {
            information.push_back(random_bits(size_t(format.A), seed + uint64_t(f)));
            encoder.encode(information.back().data(), coded.data());
            tx.modulate(coded.data(), samples.data());
            channel.run(samples.data(), size_t(grid.frame_samples()), received.data());
            for (size_t n = 0; n < received.size() / size_t(nr); ++n)
                for (int r = 0; r < nr; ++r)
                    antennas[size_t(r)].push_back(received[n * size_t(nr) + size_t(r)]);
        }
    }
};

/// ofdm_rx on a backend over the recorded frames (vector sources as fast as they
/// go, GNU Radio's buffers), H and y to vector sinks.
struct received_outputs {
    std::vector<gr_complex> H, y;
    uint64_t frames = 0;
};
received_outputs receive_recorded(const recorded_frames& r,
                                  const std::string& preset,
                                  const std::string& backend,
                                  double gpu_batch_speed = 2.0)
{
    const int nr = int(r.antennas.size());
    auto rx = gr::mimo_gpu::ofdm_rx::make(preset,
                                          r.grid.nt,
                                          nr,
                                          "16qam",
                                          2,
                                          6,
                                          "hold",
                                          "lmmse",
                                          backend,
                                          true,
                                          std::vector<int>{ 0 },
                                          true,
                                          false,
                                          gpu_batch_speed);
    auto H_sink = gr::blocks::vector_sink_c::make(nr * r.grid.nt);
    auto y_sink = gr::blocks::vector_sink_c::make(nr);
    auto tb = gr::make_top_block("ofdm_recorded");
    for (int a = 0; a < nr; ++a)
        tb->connect(gr::blocks::vector_source_c::make(r.antennas[size_t(a)]), 0, rx, a);
    tb->connect(rx, 0, H_sink, 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    return { H_sink->data(), y_sink->data(), rx->frames_received() };
}

} // namespace

TEST(ofdm_flowgraph_cuda, fast_sources_give_the_cpu_receivers_frames)
{
    // The CUDA receiver copies page-locked samples straight from GNU Radio's
    // buffers: it must not free them for the sources before the copy is done
    // (consuming first made frames fail under load). Sources as fast as they
    // go, buffers wrapping every frame or two, compared with the CPU receiver;
    // by default, in batches whatever the pace (gpu_batch_speed 0) and a frame
    // at a time (infinity).
    MIMO_GPU_REQUIRE_CUDA();
    for (const std::string preset : { "lte1.4", "nr20" }) {
        const recorded_frames r(preset, 4, 4, 24, mimo_gpu_test::fresh_seed());
        const received_outputs cpu = receive_recorded(r, preset, "cpu");
        ASSERT_EQ(cpu.frames, 24u) << preset;
        for (const double speed : { 2.0, 0.0, double(INFINITY) }) {
            const received_outputs gpu = receive_recorded(r, preset, "cuda", speed);
            ASSERT_EQ(gpu.frames, cpu.frames) << preset << " " << speed;
            ASSERT_EQ(gpu.y.size(), cpu.y.size());
            ASSERT_EQ(gpu.H.size(), cpu.H.size());
            double worst = 0;
            for (size_t k = 0; k < cpu.y.size(); ++k)
                worst = std::max(worst,
                                 double(std::abs(gpu.y[k] - cpu.y[k]) /
                                        std::max(1.0f, std::abs(cpu.y[k]))));
            for (size_t k = 0; k < cpu.H.size(); ++k)
                worst = std::max(worst,
                                 double(std::abs(gpu.H[k] - cpu.H[k]) /
                                        std::max(1.0f, std::abs(cpu.H[k]))));
            EXPECT_LT(worst, 1e-3) << preset << " " << speed;
            std::printf("[ compared ] %s 4x4, 24 frames from fast sources, "
                        "gpu_batch_speed %g: CUDA against CPU receiver, worst %.2e\n",
                        preset.c_str(),
                        speed,
                        worst);
        }
    }
}

TEST_P(ofdm_flowgraph, the_chain_decodes_every_frames_block_with_default_parameters)
{
    // samples -> ofdm_rx -> mimo_detector -> tb_stream_decoder, every block's
    // parameters at their defaults but the frame and the code (device buffers on
    // CUDA, the decoder's batch chosen from G): every transport block decodes.
    const chain_case c = GetParam();
    const recorded_frames r("lte1.4", c.nt, c.nr, 6, mimo_gpu_test::fresh_seed());
    const int Q = 4, S = r.grid.data_symbols;
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, S, "hold", "lmmse", c.backend);
    auto det = gr::mimo_gpu::mimo_detector::make(
        "nway", c.nr, c.nt, "16qam", "", 1.0, S, c.backend);
    auto dec = gr::mimo_gpu::tb_stream_decoder::make(
        r.format.A, r.format.G, Q, 1, 0, c.nt * Q, "max-log-map", 6, 0.75, 64, c.backend);
    auto sink = gr::blocks::vector_sink_b::make(r.format.A);
    auto tb = gr::make_top_block("ofdm_decode");
    for (int a = 0; a < c.nr; ++a)
        tb->connect(gr::blocks::vector_source_c::make(r.antennas[size_t(a)]), 0, rx, a);
    tb->connect(rx, 0, det, 0);
    tb->connect(rx, 1, det, 1);
    tb->connect(det, 0, dec, 0);
    tb->connect(dec, 0, sink, 0);
    tb->run();
    EXPECT_EQ(rx->device_buffers(), c.backend == "cuda");
    EXPECT_EQ(det->device_buffers(), c.backend == "cuda");
    EXPECT_EQ(dec->device_buffers(), c.backend == "cuda");
    ASSERT_EQ(sink->data().size(), r.information.size() * size_t(r.format.A));
    for (size_t f = 0; f < r.information.size(); ++f)
        EXPECT_TRUE(std::equal(r.information[f].begin(),
                               r.information[f].end(),
                               sink->data().begin() + ptrdiff_t(f * size_t(r.format.A))))
            << "frame " << f;
    EXPECT_EQ(dec->crc_failures(), 0u);
}

TEST_P(ofdm_flowgraph, streams_of_different_lengths_end_the_receiver_with_the_shortest)
{
    const chain_case c = GetParam();
    const recorded_frames r("lte1.4", c.nt, c.nr, 4, mimo_gpu_test::fresh_seed());
    const size_t period = r.antennas[0].size() / 4;
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, 6, "hold", "lmmse", c.backend);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("ofdm_lengths");
    for (int a = 0; a < c.nr; ++a) {
        // antenna 1's stream ends in the middle of the third frame; the others run on
        const size_t length = a == 1 ? 2 * period + period / 2 : r.antennas[0].size();
        std::vector<gr_complex> v(r.antennas[size_t(a)].begin(),
                                  r.antennas[size_t(a)].begin() + ptrdiff_t(length));
        tb->connect(gr::blocks::vector_source_c::make(v), 0, rx, a);
    }
    tb->connect(rx, 0, gr::blocks::null_sink::make(sizeof(gr_complex) * c.nr * c.nt), 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run(); // ends: it does not wait for the shorter antenna
    EXPECT_EQ(rx->frames_received(), 2u);
    EXPECT_EQ(y_sink->data().size(), 2 * r.grid.data_elements() * size_t(c.nr));
}

TEST_P(ofdm_flowgraph, a_flowgraph_run_again_receives_its_frames_again)
{
    // The receiver starts a new stream when the flowgraph runs a second time:
    // the same frames, to the bit, and its counters for the new run.
    const chain_case c = GetParam();
    const recorded_frames r("lte1.4", c.nt, c.nr, 3, mimo_gpu_test::fresh_seed());
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, 6, "hold", "lmmse", c.backend);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("ofdm_twice");
    std::vector<gr::blocks::vector_source_c::sptr> sources;
    for (int a = 0; a < c.nr; ++a) {
        sources.push_back(gr::blocks::vector_source_c::make(r.antennas[size_t(a)]));
        tb->connect(sources.back(), 0, rx, a);
    }
    tb->connect(rx, 0, gr::blocks::null_sink::make(sizeof(gr_complex) * c.nr * c.nt), 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    const std::vector<gr_complex> first = y_sink->data();
    ASSERT_EQ(rx->frames_received(), 3u);
    for (auto& source : sources)
        source->rewind();
    y_sink->reset();
    tb->run();
    EXPECT_EQ(rx->frames_received(), 3u);
    EXPECT_TRUE(y_sink->data() == first) << "the second run's frames";
}

TEST_P(ofdm_flowgraph, a_frame_with_non_finite_pilots_is_dropped_and_counted)
{
    const chain_case c = GetParam();
    recorded_frames r("lte1.4", c.nt, c.nr, 4, mimo_gpu_test::fresh_seed());
    const size_t period = r.antennas[0].size() / 4;
    // Frame 1's first pilot symbol: NaN on one antenna (offset, CP, preamble, CP, then
    // into the symbol).
    const size_t pilot =
        period + 20 + size_t(2 * r.grid.cp_length + r.grid.fft_size) + 30;
    r.antennas[0][pilot] = gr_complex(NAN, 0.0f);
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, 6, "hold", "lmmse", c.backend);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("ofdm_nan");
    for (int a = 0; a < c.nr; ++a)
        tb->connect(gr::blocks::vector_source_c::make(r.antennas[size_t(a)]), 0, rx, a);
    tb->connect(rx, 0, gr::blocks::null_sink::make(sizeof(gr_complex) * c.nr * c.nt), 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    EXPECT_EQ(rx->frames_received(), 3u);
    EXPECT_EQ(rx->frames_dropped(), 1u);
    EXPECT_EQ(y_sink->data().size(), 3 * r.grid.data_elements() * size_t(c.nr));
    for (const auto& v : y_sink->data())
        ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
}

TEST_P(ofdm_flowgraph, frames_through_tx_channel_rx_and_detector_have_their_bits_at_30_db)
{
    const chain_case c = GetParam();
    const int frames = 4, D = 6, Q = 4;
    // The transmit side on the same backend: on CUDA the whole chain on the GPU,
    // the antenna streams in device buffers from ofdm_tx to ofdm_rx. Two pilot
    // symbols a slot (a layout through every block).
    const std::vector<int> pilots = { 1, 4 };
    auto tx = gr::mimo_gpu::ofdm_tx::make(
        "lte1.4", c.nt, "16qam", 2, D, c.backend, true, pilots);
    const std::vector<uint8_t> bits = random_bits(size_t(frames) * tx->frame_bits(), 11);
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte1.4",
                                                          c.nt,
                                                          c.nr,
                                                          2,
                                                          D,
                                                          "eva",
                                                          30.0,
                                                          0.3,
                                                          150,
                                                          5,
                                                          0,
                                                          0,
                                                          0,
                                                          c.backend,
                                                          true,
                                                          pilots);
    EXPECT_EQ(tx->device_buffers(), c.backend == "cuda");
    EXPECT_EQ(channel->device_buffers(), c.backend == "cuda");
    EXPECT_EQ(tx->frame_samples(), (1 + 2 * (2 + D)) * (128 + 9));
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, D, "hold", "lmmse", c.backend, true, pilots);
    // N-way with nt passes (near max-log ML): uncoded errors at 30 dB come from the
    // channel estimates.
    auto det = gr::mimo_gpu::mimo_detector::make("nway",
                                                 c.nr,
                                                 c.nt,
                                                 "16qam",
                                                 "passes=" + std::to_string(c.nt),
                                                 1.0,
                                                 rx->symbols_per_channel(),
                                                 c.backend);
    auto sink = gr::blocks::vector_sink_f::make(c.nt * Q);
    auto tb = gr::make_top_block("ofdm_chain");
    tb->connect(source, 0, tx, 0);
    connect_antennas(tb, tx, channel, c.nt);
    connect_antennas(tb, channel, rx, c.nr);
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
    std::printf("[ measured ] %dx%d %s: %d frames, %zu of %zu bits wrong before "
                "decoding, last N0 %.2e\n",
                c.nr,
                c.nt,
                c.backend.c_str(),
                frames,
                errors,
                bits.size(),
                rx->last_noise_var());
    EXPECT_GT(rx->last_noise_var(), 5e-4);
    EXPECT_LT(rx->last_noise_var(), 5e-3);
}

TEST_P(ofdm_flowgraph, a_stream_cut_in_its_last_frame_gives_whole_frames_only)
{
    const chain_case c = GetParam();
    const int D = 6;
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", c.nt, "16qam", 2, D, c.backend);
    const std::vector<uint8_t> bits = random_bits(3 * size_t(tx->frame_bits()), 12);
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    // Host outputs: a head block cuts the stream below.
    auto channel = gr::mimo_gpu::ofdm_channel_model::make(
        "lte1.4", c.nt, c.nr, 2, D, "epa", 30.0, 0.0, 40, 6, 0, 0, 0, c.backend, false);
    // Cut the third frame short on every antenna: two whole frames come out.
    const int out_per_frame =
        tx->frame_samples() + 40 + 1; // offset + EPA spread (1 sample at 1.92 MHz)
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, D, "hold", "lmmse", c.backend);
    auto H_sink = gr::blocks::vector_sink_c::make(c.nr * c.nt);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("ofdm_cut");
    tb->connect(source, 0, tx, 0);
    connect_antennas(tb, tx, channel, c.nt);
    for (int r = 0; r < c.nr; ++r) {
        auto head = gr::blocks::head::make(
            sizeof(gr_complex), uint64_t(2 * out_per_frame + out_per_frame / 2));
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
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, 6, "hold", "lmmse", c.backend);
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

TEST_P(ofdm_flowgraph, each_frame_is_tagged_with_its_estimates)
{
    // EPA at 300 Hz through four pilot symbols a slot, LMMSE in time: each
    // frame's first y item carries noise_var and an ofdm_frame dict whose CFO,
    // delay spread and Doppler are this frame's.
    const chain_case c = GetParam();
    const int frames = 3, D = 10;
    const std::vector<int> pilots = { 1, 5, 8, 12 };
    auto tx = gr::mimo_gpu::ofdm_tx::make(
        "lte1.4", c.nt, "16qam", 2, D, c.backend, true, pilots);
    auto source = gr::blocks::vector_source_b::make(
        random_bits(size_t(frames) * tx->frame_bits(), 5), false, tx->frame_bits());
    auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte1.4",
                                                          c.nt,
                                                          c.nr,
                                                          2,
                                                          D,
                                                          "epa",
                                                          30.0,
                                                          0.2,
                                                          100,
                                                          7,
                                                          0,
                                                          0,
                                                          300.0,
                                                          c.backend,
                                                          true,
                                                          pilots);
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte1.4", c.nt, c.nr, "16qam", 2, D, "lmmse", "lmmse", c.backend, false, pilots);
    auto H_sink = gr::blocks::null_sink::make(sizeof(gr_complex) * c.nr * c.nt);
    auto y_sink = gr::blocks::vector_sink_c::make(c.nr);
    auto tb = gr::make_top_block("tags");
    tb->connect(source, 0, tx, 0);
    connect_antennas(tb, tx, channel, c.nt);
    connect_antennas(tb, channel, rx, c.nr);
    tb->connect(rx, 0, H_sink, 0);
    tb->connect(rx, 1, y_sink, 0);
    tb->run();
    ASSERT_EQ(rx->frames_received(), uint64_t(frames));
    const uint64_t per_frame = uint64_t(2 * 72 * D);
    int tagged = 0;
    for (const gr::tag_t& t : y_sink->tags()) {
        if (pmt::symbol_to_string(t.key) != "ofdm_frame")
            continue;
        EXPECT_EQ(t.offset % per_frame, 0u) << "on a frame's first item";
        const auto value = [&](const char* key) {
            return pmt::to_double(pmt::dict_ref(t.value, pmt::mp(key), pmt::PMT_NIL));
        };
        EXPECT_NEAR(value("cfo"), 0.2, 0.05);
        EXPECT_GT(value("delay_spread"), 0.0);
        EXPECT_LT(value("delay_spread"), 9.0) << "EPA lies within the CP";
        EXPECT_GT(value("doppler"), 100.0) << "a frame's estimate (seen 171-338 Hz)";
        EXPECT_LT(value("doppler"), 500.0);
        std::printf("[ measured ] %s frame %d: cfo %.3f, delay spread %.1f samples, "
                    "Doppler %.0f Hz (300 Hz)\n",
                    c.backend.c_str(),
                    tagged,
                    value("cfo"),
                    value("delay_spread"),
                    value("doppler"));
        ++tagged;
    }
    EXPECT_EQ(tagged, frames);
}

INSTANTIATE_TEST_SUITE_P(shapes_and_backends,
                         ofdm_flowgraph,
                         ::testing::Values(chain_case{ 2, 2, "cpu" },
                                           chain_case{ 4, 4, "cpu" },
                                           chain_case{ 2, 2, "cuda" },
                                           chain_case{ 4, 4, "cuda" }),
                         [](const ::testing::TestParamInfo<chain_case>& i) {
                             return std::to_string(i.param.nr) + "x" +
                                    std::to_string(i.param.nt) + "_" + i.param.backend;
                         });

/// The transmit side's blocks on a backend (the parameter).
class transmit_side_blocks : public ::testing::TestWithParam<std::string>
{
protected:
    void SetUp() override
    {
        if (GetParam() == "cuda") {
            MIMO_GPU_REQUIRE_CUDA();
        }
    }
};

/// bits -> ofdm_tx -> ofdm_channel_model -> vector sinks on a backend: the
/// received streams, antenna by antenna.
std::vector<std::vector<gr_complex>>
transmit_through_channel(const std::vector<uint8_t>& bits,
                         const std::string& backend,
                         bool tx_device_buffers,
                         bool channel_device_buffers)
{
    const int nt = 2, nr = 3, D = 6;
    auto tx = gr::mimo_gpu::ofdm_tx::make(
        "lte3", nt, "64qam", 2, D, backend, tx_device_buffers);
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    auto channel = gr::mimo_gpu::ofdm_channel_model::make("lte3",
                                                          nt,
                                                          nr,
                                                          2,
                                                          D,
                                                          "etu",
                                                          15.0,
                                                          0.2,
                                                          33,
                                                          77,
                                                          0.3,
                                                          0.5,
                                                          70.0,
                                                          backend,
                                                          channel_device_buffers);
    EXPECT_EQ(channel->active_backend(), backend);
    auto tb = gr::make_top_block("transmit_side");
    tb->connect(source, 0, tx, 0);
    connect_antennas(tb, tx, channel, nt);
    std::vector<gr::blocks::vector_sink_c::sptr> sinks;
    for (int r = 0; r < nr; ++r) {
        sinks.push_back(gr::blocks::vector_sink_c::make());
        tb->connect(channel, r, sinks.back(), 0);
    }
    tb->run();
    std::vector<std::vector<gr_complex>> out;
    for (const auto& k : sinks)
        out.push_back(k->data());
    return out;
}

TEST(transmit_side_blocks_cuda, the_gpu_transmit_side_sends_what_the_cpu_one_sends)
{
    // The same bits and seed (Doppler, correlation, CFO, noise): the GPU's
    // samples equal the CPU's to rounding, with the streams in device buffers
    // between the blocks or in host buffers.
    MIMO_GPU_REQUIRE_CUDA();
    const std::vector<uint8_t> bits = random_bits(
        5 * size_t(gr::mimo_gpu::ofdm_tx::make("lte3", 2, "64qam")->frame_bits()),
        mimo_gpu_test::fresh_seed());
    const auto cpu = transmit_through_channel(bits, "cpu", false, false);
    for (const auto& [tx_device, channel_device] :
         { std::pair{ true, false }, std::pair{ false, true } }) {
        const auto gpu =
            transmit_through_channel(bits, "cuda", tx_device, channel_device);
        ASSERT_EQ(gpu.size(), cpu.size());
        double diff = 0, peak = 0;
        for (size_t r = 0; r < cpu.size(); ++r) {
            ASSERT_EQ(gpu[r].size(), cpu[r].size()) << "antenna " << r;
            for (size_t n = 0; n < cpu[r].size(); ++n) {
                diff = std::max(diff, double(std::abs(gpu[r][n] - cpu[r][n])));
                peak = std::max(peak, double(std::abs(cpu[r][n])));
            }
        }
        std::printf("[ measured ] device buffers tx %d channel %d: largest difference "
                    "%.2e of the peak\n",
                    int(tx_device),
                    int(channel_device),
                    diff / peak);
        EXPECT_LT(diff / peak, 1e-5);
    }
}

TEST_P(transmit_side_blocks,
       a_frame_of_bad_bits_ends_the_stream_after_the_frames_before_it)
{
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", 2, "16qam", 2, 6, GetParam(), false);
    const size_t B = size_t(tx->frame_bits());
    std::vector<uint8_t> bits = random_bits(4 * B, mimo_gpu_test::fresh_seed());
    bits[2 * B + 100] = 7; // frame 2
    auto source = gr::blocks::vector_source_b::make(bits, false, tx->frame_bits());
    auto sink0 = gr::blocks::vector_sink_c::make(),
         sink1 = gr::blocks::vector_sink_c::make();
    auto tb = gr::make_top_block("bad_bits");
    tb->connect(source, 0, tx, 0);
    tb->connect(tx, 0, sink0, 0);
    tb->connect(tx, 1, sink1, 0);
    tb->run(); // ends: no hang
    EXPECT_EQ(sink0->data().size(), 2 * size_t(tx->frame_samples()));
    EXPECT_EQ(sink1->data().size(), 2 * size_t(tx->frame_samples()));
}

TEST_P(transmit_side_blocks, a_loopback_flowgraph_decodes_every_transport_block)
{
    // tb_source -> ofdm_tx -> ofdm_channel_model -> ofdm_rx -> mimo_detector ->
    // tb_stream_decoder, every block on the backend at its defaults (on CUDA the
    // whole chain in device buffers): every block decodes at 30 dB EPA.
    const std::string backend = GetParam();
    const int nt = 2, nr = 2, D = 6, blocks = 12;
    mimo_gpu::ofdm_grid g = mimo_gpu::ofdm_grid::preset("lte5");
    g.nt = nt;
    g.slots = 2;
    g.data_symbols = D;
    const int G = int(g.frame_bits()), Qm = 4, A = G / 2 - 24;
    auto source = gr::mimo_gpu::tb_source::make(A, G, Qm, 1, 0, 5, 4, blocks, backend);
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte5", nt, "16qam", 2, D, backend);
    auto channel = gr::mimo_gpu::ofdm_channel_model::make(
        "lte5", nt, nr, 2, D, "epa", 30.0, 0.05, 64, 9, 0, 0, 0, backend);
    auto rx = gr::mimo_gpu::ofdm_rx::make(
        "lte5", nt, nr, "16qam", 2, D, "hold", "lmmse", backend);
    auto det = gr::mimo_gpu::mimo_detector::make(
        "mmse", nr, nt, "16qam", "", 1.0, rx->symbols_per_channel(), backend);
    auto dec = gr::mimo_gpu::tb_stream_decoder::make(
        A, G, Qm, 1, 0, nt * Qm, "max-log-map", 6, 0.75, 64, backend);
    auto decoded = gr::blocks::vector_sink_b::make(A);
    auto sent = gr::blocks::vector_sink_b::make(A);
    auto tb = gr::make_top_block("loopback");
    tb->connect(source, 0, tx, 0);
    tb->connect(source, 1, sent, 0);
    connect_antennas(tb, tx, channel, nt);
    connect_antennas(tb, channel, rx, nr);
    tb->connect(rx, 0, det, 0);
    tb->connect(rx, 1, det, 1);
    tb->connect(det, 0, dec, 0);
    tb->connect(dec, 0, decoded, 0);
    tb->run();
    EXPECT_EQ(tx->active_backend(), backend);
    EXPECT_EQ(rx->frames_received(), uint64_t(blocks));
    ASSERT_EQ(decoded->data().size(), size_t(blocks) * size_t(A));
    ASSERT_EQ(sent->data().size(), size_t(blocks) * size_t(A));
    EXPECT_EQ(decoded->data(), sent->data());
    EXPECT_EQ(dec->crc_failures(), 0u);
}

INSTANTIATE_TEST_SUITE_P(backends,
                         transmit_side_blocks,
                         ::testing::Values("cpu", "cuda"));

TEST(ofdm_blocks, bad_parameters_are_invalid_argument)
{
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte7"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 9), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 2, "8psk"), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 2, "16qam", 2, 6, "tpu"),
                 std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make(
                     "lte1.4", 2, 2, 2, 6, "epa", 20, 0, 0, 1, 0, 0, 0, "tpu"),
                 std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make(
                     "lte1.4", 9, 9, 2, 6, "epa", 20, 0, 0, 1, 0, 0, 0, "cuda"),
                 std::exception); // nt > 8 (or, without a GPU, no CUDA)
    // "auto" runs a channel the GPU does not take (more than 8 antennas) on the CPU.
    EXPECT_EQ(gr::mimo_gpu::ofdm_channel_model::make(
                  "lte1.4", 2, 9, 2, 6, "epa", 20, 0, 0, 1, 0, 0, 0, "auto")
                  ->active_backend(),
              "cpu");
    if (!mimo_gpu::cuda_available()) { // CUDA demanded and absent: a clear error
        EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make("lte1.4", 2, "16qam", 2, 6, "cuda"),
                     std::runtime_error);
        EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make(
                         "lte1.4", 2, 2, 2, 6, "epa", 20, 0, 0, 1, 0, 0, 0, "cuda"),
                     std::runtime_error);
    }
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make("lte1.4", 2, 2, 2, 6, "tdl-z"),
                 std::invalid_argument);
    EXPECT_THROW(
        gr::mimo_gpu::ofdm_channel_model::make("lte1.4", 2, 2, 2, 6, "epa", 20, 0, -1),
        std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 4, 2),
                 std::invalid_argument); // nr < nt
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 2, 6, "cubic"),
                 std::invalid_argument);
    EXPECT_THROW(
        gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 2, 6, "hold", "spline"),
        std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_rx::make("lte1.4", 2, 2, "16qam", 0, 6),
                 std::invalid_argument);
    // ofdm_rx with everything at its default but the pilots and the batch pace
    const auto rx_with = [](std::vector<int> pilots, double gpu_batch_speed) {
        return gr::mimo_gpu::ofdm_rx::make("lte1.4",
                                           2,
                                           2,
                                           "16qam",
                                           2,
                                           6,
                                           "hold",
                                           "lmmse",
                                           "auto",
                                           true,
                                           pilots,
                                           true,
                                           false,
                                           gpu_batch_speed);
    };
    for (const double speed : { -1.0, double(NAN) })
        EXPECT_THROW(rx_with({ 0 }, speed), std::invalid_argument);
    // pilot layouts the slot cannot hold
    EXPECT_THROW(gr::mimo_gpu::ofdm_tx::make(
                     "lte1.4", 2, "16qam", 2, 6, "auto", true, std::vector<int>{ 7 }),
                 std::invalid_argument);
    EXPECT_THROW(rx_with({ 3, 1 }, 2.0), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::ofdm_channel_model::make("lte1.4",
                                                        2,
                                                        2,
                                                        2,
                                                        6,
                                                        "epa",
                                                        20,
                                                        0,
                                                        0,
                                                        1,
                                                        0,
                                                        0,
                                                        0,
                                                        "auto",
                                                        true,
                                                        std::vector<int>{}),
                 std::invalid_argument);
}

TEST(sigmf_blocks, a_recorded_stream_plays_back_and_decodes_as_live)
{
    // tx -> channel -> (a) rx -> detector live, (b) sigmf_file_sink; then
    // sigmf_file_source -> rx -> detector: the same LLRs (cf32 is exact).
    const int nt = 2, nr = 2, D = 6, Q = 4;
    auto tx = gr::mimo_gpu::ofdm_tx::make("lte1.4", nt, "16qam", 2, D);
    const std::vector<uint8_t> bits = random_bits(3 * size_t(tx->frame_bits()), 21);
    const std::string base = ::testing::TempDir() + "mimo_gpu_block_recording";
    auto chain =
        [&](gr::top_block_sptr tb, gr::basic_block_sptr upstream, bool from_file) {
            auto rx = gr::mimo_gpu::ofdm_rx::make(
                "lte1.4", nt, nr, "16qam", 2, D, "hold", "lmmse", "cpu");
            auto det = gr::mimo_gpu::mimo_detector::make(
                "mmse", nr, nt, "16qam", "", 1.0, rx->symbols_per_channel(), "cpu");
            auto sink = gr::blocks::vector_sink_f::make(nt * Q);
            connect_antennas(tb, upstream, rx, nr);
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
        auto channel = gr::mimo_gpu::ofdm_channel_model::make(
            "lte1.4", nt, nr, 2, D, "epa", 25.0, 0.2, 60, 8);
        auto recorder = gr::mimo_gpu::sigmf_file_sink::make(base,
                                                            nr,
                                                            1.92e6,
                                                            2.45e9,
                                                            "cf32",
                                                            1.0,
                                                            "lte1.4",
                                                            nt,
                                                            "16qam",
                                                            2,
                                                            D,
                                                            "block test");
        tb->connect(source, 0, tx, 0);
        connect_antennas(tb, tx, channel, nt);
        connect_antennas(tb, channel, recorder, nr);
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
    // The same recording into receivers made for other frames: the source tags
    // the recording's frame, the receiver refuses it (sync alone would find these
    // frames and hand out garbage) and ends, receiving nothing.
    for (const std::string& other :
         { std::string("64qam"), std::string("lte3"), std::string("pilots") }) {
        auto tb_other = gr::make_top_block("another frame");
        auto player_other = gr::mimo_gpu::sigmf_file_source::make(base, nr);
        auto rx = other == "lte3"
                      ? gr::mimo_gpu::ofdm_rx::make(
                            "lte3", nt, nr, "16qam", 2, D, "hold", "lmmse", "cpu")
                  : other == "pilots" // the same frame length, the pilot symbol moved
                      ? gr::mimo_gpu::ofdm_rx::make("lte1.4",
                                                    nt,
                                                    nr,
                                                    "16qam",
                                                    2,
                                                    D,
                                                    "hold",
                                                    "lmmse",
                                                    "cpu",
                                                    true,
                                                    std::vector<int>{ 3 })
                      : gr::mimo_gpu::ofdm_rx::make(
                            "lte1.4", nt, nr, other, 2, D, "hold", "lmmse", "cpu");
        auto H_sink = gr::blocks::null_sink::make(sizeof(gr_complex) * nr * nt);
        auto y_sink = gr::blocks::null_sink::make(sizeof(gr_complex) * nr);
        connect_antennas(tb_other, player_other, rx, nr);
        tb_other->connect(rx, 0, H_sink, 0);
        tb_other->connect(rx, 1, y_sink, 0);
        tb_other->run();
        EXPECT_TRUE(rx->frame_mismatch()) << other;
        EXPECT_EQ(rx->frames_received(), 0u) << other;
    }
    // a recording of 2 channels refused by a 4-channel source, a missing one too
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_source::make(base, 4), std::invalid_argument);
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_source::make(base + "_missing", 2),
                 std::runtime_error);
    EXPECT_THROW(gr::mimo_gpu::sigmf_file_sink::make(base, 2, 1e6, 0, "ri8"),
                 std::invalid_argument);
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
