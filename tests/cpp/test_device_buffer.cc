/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// device_buffer's bookkeeping in the shapes where GNU Radio's custom buffers
// are known to go wrong: an ordinary block with history reading it, a block
// with several custom-buffer outputs, two custom-buffer blocks in a row, and
// long streams that wrap the buffers many times. On a machine without a GPU
// the "device" side is simulated in host memory (device_buffer's test mode),
// so CI runs the same index logic the GPU machine runs for real.

#include <gnuradio/block_detail.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/sync_interpolator.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/device_memory.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace {

using gr::mimo_gpu::device_buffer;

bool simulated() { return !::mimo_gpu::cuda_available(); }

/// Counts 0, 1, 2, ... on `outputs` custom-buffer outputs (output k adds k*1e6).
class counting_source : public gr::sync_block
{
public:
    /// vlens: floats per item of each output (default: one output of 1).
    counting_source(uint64_t items, int outputs, std::vector<int> vlens = {})
        : gr::sync_block("counting_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::makev(
                             outputs,
                             outputs,
                             item_sizes(outputs, vlens),
                             gr::gr_vector_buffer_type(outputs, device_buffer::type))),
          m_items(items),
          m_vlens(vlens.empty() ? std::vector<int>(outputs, 1) : vlens)
    {
    }
    static std::vector<int> item_sizes(int outputs, std::vector<int> vlens)
    {
        if (vlens.empty())
            vlens.assign(outputs, 1);
        for (auto& v : vlens)
            v *= sizeof(float);
        return vlens;
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        if (nitems_written(0) == 0 && !gr::mimo_gpu::device_outputs_stall(*this).empty())
            return WORK_DONE; // as the module's GPU sources do
        const uint64_t done = nitems_written(0);
        if (done >= m_items)
            return WORK_DONE;
        const int count = int(std::min<uint64_t>(uint64_t(n), m_items - done));
        for (size_t k = 0; k < out.size(); ++k) {
            const int vlen = m_vlens[k];
            std::vector<float> values(size_t(count) * vlen);
            for (int i = 0; i < count; ++i)
                for (int j = 0; j < vlen; ++j)
                    values[size_t(i) * vlen + j] = float(done + i) + 1e6f * k;
            write(out[k], values);
        }
        return count;
    }

private:
    /// Writes host values into a device-side pointer.
    static void write(void* dst, const std::vector<float>& v)
    {
        if (simulated())
            std::copy(v.begin(), v.end(), static_cast<float*>(dst));
        else
            ::mimo_gpu::copy_memory(dst,
                                    v.data(),
                                    v.size() * sizeof(float),
                                    ::mimo_gpu::copy_direction::host_to_device);
    }
    uint64_t m_items;
    std::vector<int> m_vlens;
};

/// Output i = input i through a history of `history` (an ordinary block).
class history_copy : public gr::sync_block
{
public:
    explicit history_copy(unsigned history, int vlen = 1)
        : gr::sync_block("history_copy",
                         gr::io_signature::make(1, 1, sizeof(float) * vlen),
                         gr::io_signature::make(1, 1, sizeof(float) * vlen)),
          m_vlen(vlen)
    {
        set_history(history);
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        const auto x = static_cast<const float*>(in[0]) + (history() - 1) * m_vlen;
        std::copy(x, x + size_t(n) * m_vlen, static_cast<float*>(out[0]));
        return n;
    }

private:
    int m_vlen;
};

/// A GPU block stand-in: reads device memory where it is given it (an ordinary
/// input type, as the module's GPU blocks have) and writes a device buffer.
class device_copy : public gr::sync_block, public gr::mimo_gpu::device_stream_reader
{
public:
    device_copy()
        : gr::sync_block("device_copy",
                         gr::io_signature::make(1, 1, sizeof(float)),
                         gr::io_signature::make(1, 1, sizeof(float), device_buffer::type))
    {
    }
    bool reads_device_memory() const override { return true; }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        if (simulated())
            std::copy_n(static_cast<const float*>(in[0]), n, static_cast<float*>(out[0]));
        else
            ::mimo_gpu::copy_memory(out[0],
                                    in[0],
                                    size_t(n) * sizeof(float),
                                    ::mimo_gpu::copy_direction::any);
        return n;
    }
};

class device_buffer_test : public ::testing::Test
{
protected:
    void SetUp() override { device_buffer::simulate_device_memory(simulated()); }
    void TearDown() override { device_buffer::simulate_device_memory(false); }
};

void expect_count(const std::vector<float>& got, uint64_t items, float offset = 0)
{
    ASSERT_EQ(got.size(), items);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], float(i) + offset) << "item " << i;
}

TEST_F(device_buffer_test, an_ordinary_block_with_history_reads_it)
{
    for (unsigned history : { 2u, 3u, 17u }) {
        SCOPED_TRACE(history);
        const uint64_t items = 300007;
        auto tb = gr::make_top_block("history");
        auto source = std::make_shared<counting_source>(items, 1);
        auto copy = std::make_shared<history_copy>(history);
        auto sink = gr::blocks::vector_sink_f::make();
        tb->connect(source, 0, copy, 0);
        tb->connect(copy, 0, sink, 0);
        tb->run();
        expect_count(sink->data(), items);
    }
}

TEST_F(device_buffer_test, a_history_reader_beside_other_outputs_is_refused_not_hung)
{
    // The channel source's shape: three custom-buffer outputs of about 1000
    // items, an ordinary block with history on one of them. GNU Radio 3.10.5
    // stalls here (its own host_buffer crashes): device_outputs_stall names
    // the shape and the source ends at once.
    const uint64_t items = 54321;
    auto tb = gr::make_top_block("history_outputs");
    auto source =
        std::make_shared<counting_source>(items, 3, std::vector<int>{ 16, 8, 2 });
    for (int k = 0; k < 3; ++k)
        source->set_min_output_buffer(k, 1000);
    auto copy = std::make_shared<history_copy>(3, 8);
    std::vector<gr::blocks::vector_sink_f::sptr> sinks{
        gr::blocks::vector_sink_f::make(16),
        gr::blocks::vector_sink_f::make(8),
        gr::blocks::vector_sink_f::make(2)
    };
    tb->connect(source, 0, sinks[0], 0);
    tb->connect(source, 1, copy, 0);
    tb->connect(copy, 0, sinks[1], 0);
    tb->connect(source, 2, sinks[2], 0);
    tb->run(); // returns: nothing hangs
    EXPECT_NE(gr::mimo_gpu::device_outputs_stall(*source).find("history 3"),
              std::string::npos);
    EXPECT_EQ(sinks[1]->data().size(), 0u);
}

TEST_F(device_buffer_test, several_outputs_and_two_custom_buffer_blocks_in_a_row)
{
    const uint64_t items = 250003;
    auto tb = gr::make_top_block("outputs");
    auto source = std::make_shared<counting_source>(items, 3);
    auto first = std::make_shared<device_copy>(),
         second = std::make_shared<device_copy>();
    std::vector<gr::blocks::vector_sink_f::sptr> sinks;
    for (int k = 0; k < 3; ++k)
        sinks.push_back(gr::blocks::vector_sink_f::make());
    tb->connect(source, 0, first, 0);
    tb->connect(first, 0, second, 0); // device -> device -> device
    tb->connect(second, 0, sinks[0], 0);
    tb->connect(source, 1, sinks[1], 0); // device -> host
    tb->connect(source, 2, sinks[2], 0);
    tb->run();
    for (int k = 0; k < 3; ++k)
        expect_count(sinks[k]->data(), items, 1e6f * k);
}

TEST_F(device_buffer_test, a_host_source_fanned_out_to_gpu_readers)
{
    // A host source's (double-mapped) buffer read by two GPU blocks, each
    // writing its own device buffer with one reader: every item arrives.
    std::vector<float> ramp(200003);
    for (size_t i = 0; i < ramp.size(); ++i)
        ramp[i] = float(i);
    auto tb = gr::make_top_block("fan_out");
    auto host_source = gr::blocks::vector_source_f::make(ramp);
    auto first = std::make_shared<device_copy>(),
         second = std::make_shared<device_copy>();
    auto first_sink = gr::blocks::vector_sink_f::make(),
         second_sink = gr::blocks::vector_sink_f::make();
    tb->connect(host_source, 0, first, 0);
    tb->connect(host_source, 0, second, 0);
    tb->connect(first, 0, first_sink, 0);
    tb->connect(second, 0, second_sink, 0);
    tb->run();
    expect_count(first_sink->data(), ramp.size());
    expect_count(second_sink->data(), ramp.size());
}

/// A decoder's shape: `per_block` items in, one out (a GPU reader), checking
/// that every block's items are consecutive; outputs each block's first item.
class block_reader : public gr::block, public gr::mimo_gpu::device_stream_reader
{
public:
    explicit block_reader(int per_block)
        : gr::block("block_reader",
                    gr::io_signature::make(1, 1, sizeof(float)),
                    gr::io_signature::make(1, 1, sizeof(float))),
          m_per_block(per_block)
    {
        set_relative_rate(1, uint64_t(per_block));
    }
    bool reads_device_memory() const override { return true; }
    void forecast(int n, gr_vector_int& required) override
    {
        required[0] = n * m_per_block;
    }
    int general_work(int n,
                     gr_vector_int& available,
                     gr_vector_const_void_star& in,
                     gr_vector_void_star& out) override
    {
        const int blocks = std::min(n, available[0] / m_per_block);
        std::vector<float> x(size_t(blocks) * m_per_block);
        if (simulated())
            std::copy_n(static_cast<const float*>(in[0]), x.size(), x.data());
        else if (!x.empty())
            ::mimo_gpu::copy_memory(x.data(),
                                    in[0],
                                    x.size() * sizeof(float),
                                    ::mimo_gpu::copy_direction::any);
        for (int b = 0; b < blocks; ++b) {
            const float* block = x.data() + size_t(b) * m_per_block;
            for (int i = 0; i < m_per_block; ++i)
                m_broken += block[i] != block[0] + float(i);
            static_cast<float*>(out[0])[b] = block[0];
        }
        consume_each(blocks * m_per_block);
        return blocks;
    }
    uint64_t broken() const { return m_broken; }

private:
    int m_per_block;
    uint64_t m_broken = 0;
};

TEST_F(device_buffer_test, coprime_writer_and_reader_granularities_keep_the_buffer_small)
{
    // An OFDM detector's batch (16 796 = 4 * 13 * 17 * 19 items) before a
    // decoder of 85 176 (8 * 9 * 7 * 169) a block: GNU Radio's alignment of
    // the buffer's end with both is 27.5 M items. The buffer stays within a
    // few blocks, and every block arrives whole and in order across its moves.
    constexpr int batch = 16796, per_block = 85176, blocks = 40;
    auto tb = gr::make_top_block("coprime");
    auto source = std::make_shared<counting_source>(uint64_t(per_block) * blocks, 1);
    source->set_output_multiple(batch);
    auto reader = std::make_shared<block_reader>(per_block);
    auto sink = gr::blocks::vector_sink_f::make();
    tb->connect(source, 0, reader, 0);
    tb->connect(reader, 0, sink, 0);
    tb->run();
    EXPECT_LE(source->detail()->output(0)->bufsize(), 8u * per_block);
    EXPECT_EQ(reader->broken(), 0u);
    const auto firsts = sink->data();
    ASSERT_EQ(firsts.size(), size_t(blocks));
    for (int b = 0; b < blocks; ++b)
        EXPECT_EQ(firsts[size_t(b)], float(b) * per_block) << "block " << b;
}

/// One output item per input item's worth of interpolation: an ordinary
/// interpolating reader (as ofdm_tx reads a frame's bits and writes its samples).
class interpolating_reader : public gr::sync_interpolator
{
public:
    interpolating_reader(int vlen, unsigned interpolation)
        : gr::sync_interpolator("interpolating_reader",
                                gr::io_signature::make(1, 1, sizeof(float) * vlen),
                                gr::io_signature::make(1, 1, sizeof(float)),
                                interpolation),
          m_vlen(vlen)
    {
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        const auto x = static_cast<const float*>(in[0]);
        auto y = static_cast<float*>(out[0]);
        const int per = int(interpolation());
        for (int i = 0; i < n; ++i)
            y[i] = x[size_t(i / per) * m_vlen]; // the item's count, repeated
        return n;
    }

private:
    int m_vlen;
};

TEST_F(device_buffer_test, an_interpolating_reader_of_large_items_keeps_the_buffer_small)
{
    // 64 KB items read by a block that makes 100 000 outputs of each: GNU
    // Radio's "four of the reader's output multiple" would be 400 000 items, 26 GB.
    constexpr int vlen = 16384, items = 12;
    constexpr unsigned per_item = 100000;
    auto tb = gr::make_top_block("interpolating_reader");
    auto source = std::make_shared<counting_source>(items, 1, std::vector<int>{ vlen });
    auto reader = std::make_shared<interpolating_reader>(vlen, per_item);
    auto sink = gr::blocks::vector_sink_f::make();
    tb->connect(source, 0, reader, 0);
    tb->connect(reader, 0, sink, 0);
    tb->run();
    EXPECT_LE(uint64_t(source->detail()->output(0)->bufsize()) * vlen * sizeof(float),
              uint64_t(64) << 20);
    const auto out = sink->data();
    ASSERT_EQ(out.size(), size_t(items) * per_item);
    for (int k = 0; k < items; ++k)
        ASSERT_EQ(out[size_t(k) * per_item + per_item - 1], float(k)) << "item " << k;
}

} // namespace
