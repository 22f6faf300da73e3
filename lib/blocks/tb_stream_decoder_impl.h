/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_STREAM_DECODER_IMPL_H
#define INCLUDED_MIMO_GPU_TB_STREAM_DECODER_IMPL_H

#include "plumbing/batch_gate.h"
#include "plumbing/device_output_guard.h"
#include "plumbing/transport_block_codes.h"
#include "plumbing/work_trace.h"

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/tb_stream_decoder.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/transport_block_pipeline.h>

#include <atomic>
#include <memory>
#include <vector>

namespace gr {
namespace mimo_gpu {

class tb_stream_decoder_impl : public tb_stream_decoder, public device_stream_reader
{
public:
    /// make_decoder: another decoder like `decoder`, one per batch in flight
    /// (device buffers only).
    tb_stream_decoder_impl(
        std::unique_ptr<::mimo_gpu::transport_block_code_decoder> decoder,
        const ::mimo_gpu::transport_block_decoder_factory& make_decoder,
        int llrs_per_item,
        int max_blocks,
        bool device_buffers);

    void set_rv(int rv) override;
    int rv() const override;
    std::string active_backend() const override;
    bool device_buffers() const override { return d_pipeline != nullptr; }
    std::string code() const override { return d_decoder->code(); }
    int max_blocks() const override { return d_max_blocks; }
    uint64_t blocks() const override;
    uint64_t crc_failures() const override;
    uint64_t dropped_llrs() const override;
    void set_max_wait_ms(double ms) override;
    double max_wait_ms() const override;
    bool reads_device_memory() const override { return device_buffers(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    bool stop() override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    bool input_ended() const;
    /// Items of the input not yet consumed, also those past the end of a
    /// single-mapped buffer that items_available() does not count.
    uint64_t unread_items() const;
    /// Host buffers: decodes the waiting blocks in this call.
    int host_work(int noutput_items, int whole, const float* llr, uint8_t* bits);
    /// Device buffers: queues the waiting blocks and hands on the batches of
    /// earlier calls (all of them when nothing new came), so the host does not
    /// wait for a batch while the next one waits to be queued.
    int pipelined_work(
        int noutput_items, int whole, bool ended, const float* llr, uint8_t* bits);
    /// Hands on the oldest batches in flight, all but the newest `keep`, that
    /// fit `room` output items from `bits`, and produces them: their count, or
    /// -1 when one failed (the stream ends).
    int collect(size_t keep, int room, uint8_t* bits);
    /// Device buffers: batches queued and not yet handed on.
    bool batches_in_flight() const { return d_pipeline && d_pipeline->pending() > 0; }
    /// A batch's CRC failures as tags (its first block is output item `first`),
    /// its refused blocks logged, the counters.
    void record(const ::mimo_gpu::transport_block_batch& batch, uint64_t first);
    /// The end of the stream: less than a block left, counted and dropped.
    int drop_tail(int ninput_items);

    std::unique_ptr<::mimo_gpu::transport_block_code_decoder> d_decoder;
    const int d_items_per_block; // input items per transport block, G / llrs_per_item
    std::unique_ptr<::mimo_gpu::transport_block_pipeline> d_pipeline; // device buffers
    // The setters and counters never wait for a batch being decoded: the rv is
    // applied by work(), the counters are atomic, the mutex guards the gate only.
    std::atomic<int> d_rv;
    const int d_max_blocks;
    mutable gr::thread::mutex d_mutex;
    batch_gate d_gate;
    std::atomic<uint64_t> d_blocks{ 0 }, d_crc_failures{ 0 }, d_dropped_llrs{ 0 };
    device_output_guard d_output_guard;
    work_trace d_trace{ "tb_stream_decoder" };
};

} // namespace mimo_gpu
} // namespace gr

#endif
