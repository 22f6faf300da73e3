/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_channel_source and the device-resident chain: the source's stream is the
// core generator's (CPU; CUDA to float rounding), whole channels of S, its
// noise_var tag reaches the detector, and channel source -> detector ->
// ber_counter on device buffers has every bit right at 30 dB.

#include "backend_test.h"

#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/mimo_channel_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/channel_simulator.h>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <stdexcept>
#include <vector>

namespace {

namespace core = ::mimo_gpu;
using gr::mimo_gpu::ber_counter;
using gr::mimo_gpu::mimo_channel_source;
using gr::mimo_gpu::mimo_detector;

bool have_cuda() { return core::cuda_available(); }

/// Copies vlen-4 complex items through a history of 3 (output i = input i):
/// an ordinary block with history reading a custom (device) buffer, the shape
/// that froze with GNU Radio's single-mapped buffers.
class history_copy : public gr::sync_block
{
public:
    history_copy()
        : gr::sync_block("history_copy",
                         gr::io_signature::make(1, 1, 4 * sizeof(gr_complex)),
                         gr::io_signature::make(1, 1, 4 * sizeof(gr_complex)))
    {
        set_history(3);
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        const auto x = static_cast<const gr_complex*>(in[0]) + 2 * 4; // past the history
        std::copy(x, x + 4 * n, static_cast<gr_complex*>(out[0]));
        return n;
    }
};

struct drawn {
    std::vector<gr_complex> H, y;
    std::vector<uint8_t> bits;
};

/// The source's outputs through ordinary vector sinks.
drawn run_source(const std::string& backend, uint64_t problems, int S, double snr_db)
{
    auto tb = gr::make_top_block("channel_source");
    auto source =
        mimo_channel_source::make(4, 2, "16qam", snr_db, 7, S, problems, backend, 1000);
    auto H = gr::blocks::vector_sink_c::make(8);
    auto y = gr::blocks::vector_sink_c::make(4);
    auto bits = gr::blocks::vector_sink_b::make(8);
    tb->connect(source, 0, H, 0);
    tb->connect(source, 1, y, 0);
    tb->connect(source, 2, bits, 0);
    tb->run();
    EXPECT_EQ(source->active_backend(), backend);
    EXPECT_FALSE(y->tags().empty());
    return { H->data(), y->data(), bits->data() };
}

TEST(channel_source, cpu_stream_is_the_core_generators_in_whole_channels)
{
    const uint64_t problems = 2500; // several work() calls of max_batch 1000
    const int S = 3;
    const drawn d = run_source("cpu", problems, S, 20.0);
    const size_t channels = (problems + S - 1) / S;
    ASSERT_EQ(d.H.size(), channels * 8);
    ASSERT_EQ(d.y.size(), channels * S * 4);
    ASSERT_EQ(d.bits.size(), channels * S * 8);
    core::channel_generator generator(
        { 4, 2 }, core::modulation::qam16, 7, S, core::backend::cpu);
    std::vector<core::cfloat> H(d.H.size()), y(d.y.size());
    std::vector<uint8_t> bits(d.bits.size());
    generator.generate(0,
                       channels,
                       core::noise_variance_from_snr_db(20.0),
                       bits.data(),
                       H.data(),
                       y.data());
    EXPECT_EQ(d.bits, bits);
    for (size_t i = 0; i < H.size(); ++i)
        ASSERT_EQ(d.H[i], H[i]) << i;
    for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(d.y[i], y[i]) << i;
}

TEST(channel_source, cuda_stream_equals_the_cpu_stream)
{
    MIMO_GPU_REQUIRE_CUDA();
    // Device buffers read by ordinary sinks: the buffer copies to the host.
    const drawn gpu = run_source("cuda", 3001, 1, 10.0),
                cpu = run_source("cpu", 3001, 1, 10.0);
    EXPECT_EQ(gpu.bits, cpu.bits);
    ASSERT_EQ(gpu.H.size(), cpu.H.size());
    ASSERT_EQ(gpu.y.size(), cpu.y.size());
    for (size_t i = 0; i < gpu.H.size(); ++i)
        ASSERT_NEAR(std::abs(gpu.H[i] - cpu.H[i]), 0.0f, 1e-5f * (1 + std::abs(cpu.H[i])))
            << i;
    for (size_t i = 0; i < gpu.y.size(); ++i)
        ASSERT_NEAR(std::abs(gpu.y[i] - cpu.y[i]), 0.0f, 1e-5f * (1 + std::abs(cpu.y[i])))
            << i;
}

TEST(channel_source, device_chain_counts_what_the_host_chain_counts)
{
    // The device-resident chain (channel source -> detector -> counter, all on
    // device buffers) and the same stream through host buffers (a second
    // source with the same seed, a detector and a counter in host memory) count
    // the same errors to the bit, for several families, at 20 dB.
    MIMO_GPU_REQUIRE_CUDA();
    for (const char* family : { "nway", "mtt", "fsd", "mmse" }) {
        SCOPED_TRACE(family);
        const uint64_t problems = 100003;
        auto tb = gr::make_top_block("device_chain");
        std::vector<ber_counter::sptr> counters;
        std::vector<mimo_detector::sptr> detectors;
        for (bool device : { true, false }) {
            auto source =
                mimo_channel_source::make(4, 4, "16qam", 20.0, 3, 1, problems, "cuda");
            // N0 = 1 on purpose: the source's noise_var tag sets the true one.
            auto det = mimo_detector::make(
                family, 4, 4, "16qam", "", 1.0, 1, "cuda", 8400, "erase", device);
            auto errors = ber_counter::make(16, device);
            tb->connect(source, 0, det, 0);
            tb->connect(source, 1, det, 1);
            tb->connect(source, 2, errors, 0);
            tb->connect(det, 0, errors, 1);
            counters.push_back(errors);
            detectors.push_back(det);
        }
        tb->run();
        EXPECT_EQ(counters[0]->bits(), problems * 16);
        EXPECT_EQ(counters[1]->bits(), problems * 16);
        EXPECT_EQ(counters[0]->errors(), counters[1]->errors());
        EXPECT_LT(counters[0]->ber(), 0.05); // 20 dB: the detector works
        EXPECT_NEAR(detectors[0]->noise_var(), 1e-2, 1e-8);
    }
}

TEST(channel_source, device_counter_counts_errors_at_0_db_and_resets)
{
    MIMO_GPU_REQUIRE_CUDA();
    // The same chain at 0 dB on device and host counters: equal counts, not zero.
    auto tb = gr::make_top_block("device_counter");
    auto source = mimo_channel_source::make(4, 4, "16qam", 0.0, 5, 1, 20000, "cuda");
    auto det = mimo_detector::make(
        "nway", 4, 4, "16qam", "", 1.0, 1, "cuda", 8400, "erase", true);
    auto on_device = ber_counter::make(16, true);
    auto host_source = mimo_channel_source::make(4, 4, "16qam", 0.0, 5, 1, 20000, "cuda");
    auto host_det = mimo_detector::make(
        "nway", 4, 4, "16qam", "", 1.0, 1, "cuda", 8400, "erase", false);
    auto on_host = ber_counter::make(16, false);
    tb->connect(source, 0, det, 0);
    tb->connect(source, 1, det, 1);
    tb->connect(source, 2, on_device, 0);
    tb->connect(det, 0, on_device, 1);
    tb->connect(host_source, 0, host_det, 0);
    tb->connect(host_source, 1, host_det, 1);
    tb->connect(host_source, 2, on_host, 0);
    tb->connect(host_det, 0, on_host, 1);
    tb->run();
    EXPECT_GT(on_device->errors(), 1000u);
    EXPECT_EQ(on_device->errors(), on_host->errors());
    EXPECT_EQ(on_device->bits(), on_host->bits());
    on_device->reset();
    EXPECT_EQ(on_device->errors(), 0u);
    EXPECT_EQ(on_device->bits(), 0u);
}

TEST(channel_source, a_block_with_history_ends_the_stream_or_reads_host_buffers)
{
    // GNU Radio 3.10.5 stalls when a block with history reads one of several
    // single-mapped outputs: the source ends its stream with an error instead
    // of hanging, and with host buffers (the generator still on the GPU) the
    // same flowgraph runs and gives the CPU's stream.
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t problems = 54321;
    const drawn cpu = run_source("cpu", problems, 1, 10.0);
    for (bool device_buffers : { true, false }) {
        SCOPED_TRACE(device_buffers);
        auto tb = gr::make_top_block("device_history");
        auto source = mimo_channel_source::make(
            4, 2, "16qam", 10.0, 7, 1, problems, "cuda", 1000, device_buffers);
        auto copy = std::make_shared<history_copy>();
        auto y = gr::blocks::vector_sink_c::make(4);
        auto H = gr::blocks::vector_sink_c::make(8);
        auto bits = gr::blocks::vector_sink_b::make(8);
        tb->connect(source, 1, copy, 0);
        tb->connect(copy, 0, y, 0);
        tb->connect(source, 0, H, 0);
        tb->connect(source, 2, bits, 0);
        tb->run(); // returns either way
        if (device_buffers) {
            EXPECT_EQ(y->data().size(), 0u);
            continue;
        }
        ASSERT_EQ(y->data().size(), cpu.y.size());
        for (size_t i = 0; i < cpu.y.size(); ++i)
            ASSERT_NEAR(
                std::abs(y->data()[i] - cpu.y[i]), 0.0f, 1e-5f * (1 + std::abs(cpu.y[i])))
                << i;
        EXPECT_EQ(bits->data(), cpu.bits);
    }
}

TEST(channel_source, bad_parameters_are_invalid_argument)
{
    EXPECT_THROW(mimo_channel_source::make(2, 4, "16qam", 10, 1), std::invalid_argument);
    EXPECT_THROW(mimo_channel_source::make(4, 4, "8psk", 10, 1), std::invalid_argument);
    EXPECT_THROW(mimo_channel_source::make(4, 4, "16qam", NAN, 1), std::invalid_argument);
    EXPECT_THROW(mimo_channel_source::make(4, 4, "16qam", 10, 1, 0),
                 std::invalid_argument);
    EXPECT_THROW(mimo_channel_source::make(4, 4, "16qam", 10, 1, 1, 0, "tpu"),
                 std::invalid_argument);
    EXPECT_THROW(mimo_channel_source::make(4, 4, "16qam", 10, 1, 1, 0, "cpu", 0),
                 std::invalid_argument);
    if (!have_cuda()) {
        EXPECT_THROW(mimo_channel_source::make(4, 4, "16qam", 10, 1, 1, 0, "cuda"),
                     std::runtime_error);
        EXPECT_THROW(ber_counter::make(16, true), std::invalid_argument);
    }
}

} // namespace
