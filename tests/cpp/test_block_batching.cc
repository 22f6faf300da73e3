/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// How the detector block moves items (issue 15): whole batches, frames in
// flight across work() calls, the tail flushed at the end. In every shape each
// item must arrive once, in order, with its tags, and equal the core's own
// detection of the same problems: stream lengths that are no multiple of any
// batch, tags on arbitrary items, blocks with history on both sides, two
// detectors sharing their sources beside an ordinary block, a stream stopped
// early, and a live stream that pauses (its items must not wait for more).

#include <gnuradio/blocks/stream_to_vector.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/blocks/vector_to_stream.h>
#include <gnuradio/filter/fir_filter_blk.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector_registry.h>

#include "backend_test.h"
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

namespace core = ::mimo_gpu;
using gr::mimo_gpu::mimo_detector;

constexpr int k_nr = 4, k_nt = 4, k_llrs = 16; // 4x4 16-QAM
constexpr int k_max_batch = 100; // frames of 100: items below are no multiple

/// Pre-drawn problems and the core's own LLRs for them.
struct problems {
    std::vector<gr_complex> H, y;
    std::vector<float> llr; // detect() of all of them at once
    problems(size_t n, const std::string& backend, float n0 = 0.05f)
    {
        core::channel_simulator sim({ k_nr, k_nt }, core::modulation::qam16, 11);
        std::vector<uint8_t> bits(n * k_llrs);
        sim.random_bits(bits.data(), bits.size());
        H.resize(n * k_nr * k_nt);
        y.resize(n * k_nr);
        sim.run(bits.data(), n, n0, H.data(), y.data());
        auto det = core::make_detector("nway",
                                       { { k_nr, k_nt }, core::modulation::qam16, {} },
                                       core::backend_from_string(backend));
        det->set_bad_problem_policy(core::bad_problem_policy::erase);
        llr.resize(n * k_llrs);
        core::detector_input in;
        in.H = H.data();
        in.y = y.data();
        in.channels = n;
        in.n0 = n0;
        det->detect(in, llr.data());
    }
};

mimo_detector::sptr make_detector(const std::string& backend, bool device_buffers = false)
{
    return mimo_detector::make("nway",
                               k_nr,
                               k_nt,
                               "16qam",
                               "",
                               0.05,
                               1,
                               backend,
                               k_max_batch,
                               "erase",
                               device_buffers);
}

/// Emits `count` items from `data` (vlen items), then produces nothing and
/// never ends until the flowgraph is stopped: a live source that pauses.
class pausing_source : public gr::sync_block
{
public:
    pausing_source(std::vector<gr_complex> data, int vlen, int count)
        : gr::sync_block("pausing_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, sizeof(gr_complex) * vlen)),
          m_data(std::move(data)),
          m_vlen(vlen),
          m_count(count)
    {
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        const int sent = int(nitems_written(0));
        if (sent >= m_count) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return 0;
        }
        const int k = std::min(n, m_count - sent);
        std::memcpy(out[0],
                    m_data.data() + size_t(sent) * m_vlen,
                    sizeof(gr_complex) * m_vlen * k);
        return k;
    }

private:
    std::vector<gr_complex> m_data;
    int m_vlen, m_count;
};

class block_batching : public backend_test
{
};

void expect_llrs(const std::vector<float>& got,
                 const std::vector<float>& want,
                 size_t items)
{
    ASSERT_EQ(got.size(), items * k_llrs);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "item " << i / k_llrs << " llr " << i % k_llrs;
}

TEST_P(block_batching, every_item_arrives_once_in_order_with_its_tags)
{
    for (size_t n : { size_t(1), size_t(37), size_t(100), size_t(1037) }) {
        SCOPED_TRACE(n);
        const problems p(n, backend());
        // Tags on arbitrary y items, the first and the last among them.
        std::vector<gr::tag_t> tags;
        for (uint64_t offset : { 0ul, 1ul, 99ul, 100ul, 401ul, 555ul, 1036ul })
            if (offset < n) {
                gr::tag_t t;
                t.offset = offset;
                t.key = pmt::mp("mark");
                t.value = pmt::from_uint64(offset);
                tags.push_back(t);
            }
        auto tb = gr::make_top_block("batching_order");
        auto H = gr::blocks::vector_source_c::make(p.H, false, k_nr * k_nt);
        auto y = gr::blocks::vector_source_c::make(p.y, false, k_nr, tags);
        auto det = make_detector(backend());
        auto sink = gr::blocks::vector_sink_f::make(k_llrs);
        tb->connect(H, 0, det, 0);
        tb->connect(y, 0, det, 1);
        tb->connect(det, 0, sink, 0);
        tb->run();
        expect_llrs(sink->data(), p.llr, n);
        const auto out_tags = sink->tags();
        ASSERT_EQ(out_tags.size(), tags.size());
        for (size_t k = 0; k < tags.size(); ++k) {
            EXPECT_EQ(out_tags[k].offset, tags[k].offset);
            EXPECT_EQ(pmt::to_uint64(out_tags[k].value), tags[k].offset);
        }
    }
}

TEST_P(block_batching, blocks_with_history_on_both_sides)
{
    // y through an identity FIR with history 3 before the detector, the LLRs
    // through another after it.
    const size_t n = 1037;
    const problems p(n, backend());
    auto tb = gr::make_top_block("batching_history");
    auto H = gr::blocks::vector_source_c::make(p.H, false, k_nr * k_nt);
    auto y = gr::blocks::vector_source_c::make(p.y, false, k_nr);
    auto y_samples = gr::blocks::vector_to_stream::make(sizeof(gr_complex), k_nr);
    auto y_fir = gr::filter::fir_filter_ccf::make(1, { 1.0f, 0.0f, 0.0f });
    auto y_vectors = gr::blocks::stream_to_vector::make(sizeof(gr_complex), k_nr);
    auto det = make_detector(backend());
    auto llr_values = gr::blocks::vector_to_stream::make(sizeof(float), k_llrs);
    auto llr_fir = gr::filter::fir_filter_fff::make(1, { 1.0f, 0.0f, 0.0f });
    auto llr_vectors = gr::blocks::stream_to_vector::make(sizeof(float), k_llrs);
    auto sink = gr::blocks::vector_sink_f::make(k_llrs);
    EXPECT_GT(y_fir->history(), 1u);
    tb->connect(H, 0, det, 0);
    tb->connect(y, 0, y_samples, 0);
    tb->connect(y_samples, 0, y_fir, 0);
    tb->connect(y_fir, 0, y_vectors, 0);
    tb->connect(y_vectors, 0, det, 1);
    tb->connect(det, 0, llr_values, 0);
    tb->connect(llr_values, 0, llr_fir, 0);
    tb->connect(llr_fir, 0, llr_vectors, 0);
    tb->connect(llr_vectors, 0, sink, 0);
    tb->run();
    expect_llrs(sink->data(), p.llr, n);
}

TEST_P(block_batching, two_detectors_share_their_sources_beside_an_ordinary_block)
{
    const size_t n = 1037;
    const problems p(n, backend());
    auto tb = gr::make_top_block("batching_fanout");
    auto H = gr::blocks::vector_source_c::make(p.H, false, k_nr * k_nt);
    auto y = gr::blocks::vector_source_c::make(p.y, false, k_nr);
    auto first = make_detector(backend()), second = make_detector(backend());
    auto first_sink = gr::blocks::vector_sink_f::make(k_llrs);
    auto second_sink = gr::blocks::vector_sink_f::make(k_llrs);
    auto y_copy = gr::blocks::vector_sink_c::make(k_nr); // an ordinary reader of y
    for (auto det : { first, second }) {
        tb->connect(H, 0, det, 0);
        tb->connect(y, 0, det, 1);
    }
    tb->connect(y, 0, y_copy, 0);
    tb->connect(first, 0, first_sink, 0);
    tb->connect(second, 0, second_sink, 0);
    tb->run();
    expect_llrs(first_sink->data(), p.llr, n);
    expect_llrs(second_sink->data(), p.llr, n);
    EXPECT_EQ(y_copy->data(), p.y);
}

TEST_P(block_batching, a_stream_stopped_early_gives_a_prefix_in_order)
{
    const size_t n = 1000;
    const problems p(n, backend());
    auto tb = gr::make_top_block("batching_stop");
    auto H = gr::blocks::vector_source_c::make(p.H, true, k_nr * k_nt);
    auto y = gr::blocks::vector_source_c::make(p.y, true, k_nr);
    auto det = make_detector(backend());
    auto sink = gr::blocks::vector_sink_f::make(k_llrs, 1 << 20);
    tb->connect(H, 0, det, 0);
    tb->connect(y, 0, det, 1);
    tb->connect(det, 0, sink, 0);
    tb->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (sink->data().size() < 3 * n * k_llrs &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    tb->stop();
    tb->wait(); // must return: frames in flight are collected, nothing hangs
    const auto got = sink->data();
    ASSERT_GE(got.size(), 3 * n * k_llrs);
    ASSERT_EQ(got.size() % k_llrs, 0u);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], p.llr[i % (n * k_llrs)]) << "item " << i / k_llrs;
}

TEST_P(block_batching, a_live_stream_that_pauses_is_not_held_back)
{
    // 37 items, fewer than a frame, and then the sources pause without ending:
    // the block detects them once they have waited max_wait.
    const int n = 37;
    const problems p(n, backend());
    auto tb = gr::make_top_block("batching_pause");
    auto H = std::make_shared<pausing_source>(p.H, k_nr * k_nt, n);
    auto y = std::make_shared<pausing_source>(p.y, k_nr, n);
    auto det = make_detector(backend());
    det->set_max_wait_ms(20);
    EXPECT_EQ(det->max_wait_ms(), 20.0);
    EXPECT_THROW(det->set_max_wait_ms(-1), std::invalid_argument);
    auto sink = gr::blocks::vector_sink_f::make(k_llrs);
    tb->connect(H, 0, det, 0);
    tb->connect(y, 0, det, 1);
    tb->connect(det, 0, sink, 0);
    tb->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sink->data().size() < size_t(n) * k_llrs &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto got = sink->data();
    tb->stop();
    tb->wait();
    expect_llrs(got, p.llr, n);
}

TEST(block_batching_device, device_buffers_carry_every_item_and_tag)
{
    // Ordinary sources write into the detector's device buffers (host -> device
    // in the buffer) and an ordinary sink reads its device output (device -> host).
    MIMO_GPU_REQUIRE_CUDA();
    for (size_t n : { size_t(1), size_t(37), size_t(1037), size_t(20011) }) {
        SCOPED_TRACE(n);
        const problems p(n, "cuda");
        std::vector<gr::tag_t> tags;
        for (uint64_t offset : { 0ul, 99ul, 100ul, 1036ul, 20010ul })
            if (offset < n) {
                gr::tag_t t;
                t.offset = offset;
                t.key = pmt::mp("mark");
                t.value = pmt::from_uint64(offset);
                tags.push_back(t);
            }
        auto tb = gr::make_top_block("device_buffers");
        auto H = gr::blocks::vector_source_c::make(p.H, false, k_nr * k_nt);
        auto y = gr::blocks::vector_source_c::make(p.y, false, k_nr, tags);
        auto det = make_detector("cuda", true);
        EXPECT_TRUE(det->device_buffers());
        auto sink = gr::blocks::vector_sink_f::make(k_llrs);
        tb->connect(H, 0, det, 0);
        tb->connect(y, 0, det, 1);
        tb->connect(det, 0, sink, 0);
        tb->run();
        expect_llrs(sink->data(), p.llr, n);
        const auto out_tags = sink->tags();
        ASSERT_EQ(out_tags.size(), tags.size());
        for (size_t k = 0; k < tags.size(); ++k)
            EXPECT_EQ(out_tags[k].offset, tags[k].offset);
    }
}

TEST(block_batching_device, two_device_buffer_detectors_share_host_sources)
{
    // Both readers of each source buffer are GPU blocks: one host -> device copy
    // serves both.
    MIMO_GPU_REQUIRE_CUDA();
    const size_t n = 5003;
    const problems p(n, "cuda");
    auto tb = gr::make_top_block("device_buffers_fanout");
    auto H = gr::blocks::vector_source_c::make(p.H, false, k_nr * k_nt);
    auto y = gr::blocks::vector_source_c::make(p.y, false, k_nr);
    auto first = make_detector("cuda", true), second = make_detector("cuda", true);
    auto first_sink = gr::blocks::vector_sink_f::make(k_llrs);
    auto second_sink = gr::blocks::vector_sink_f::make(k_llrs);
    for (auto det : { first, second }) {
        tb->connect(H, 0, det, 0);
        tb->connect(y, 0, det, 1);
    }
    tb->connect(first, 0, first_sink, 0);
    tb->connect(second, 0, second_sink, 0);
    tb->run();
    expect_llrs(first_sink->data(), p.llr, n);
    expect_llrs(second_sink->data(), p.llr, n);
}

TEST(block_batching_device, device_buffers_are_used_on_cuda_with_a_device_path)
{
    // The default: device buffers where the block runs on CUDA from device memory.
    EXPECT_FALSE(
        mimo_detector::make("nway", 4, 4, "16qam", "", 0.05, 1, "cpu")->device_buffers());
    EXPECT_FALSE(mimo_detector::make(
                     "nway", 4, 4, "16qam", "", 0.05, 1, "auto", 100, "erase", false)
                     ->device_buffers());
    if (core::cuda_available()) {
        EXPECT_TRUE(mimo_detector::make("nway", 4, 4, "16qam", "", 0.05, 1, "cuda")
                        ->device_buffers());
        // A family without a device path gets host buffers on CUDA too.
        for (const auto& family : core::detector_families()) {
            if (!family.capabilities.device_path) {
                EXPECT_FALSE(
                    mimo_detector::make(family.name, 2, 2, "qpsk", "", 0.05, 1, "cuda")
                        ->device_buffers())
                    << family.name;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(backends,
                         block_batching,
                         ::testing::Values("cpu", "cuda"),
                         [](const auto& info) { return info.param; });

} // namespace
