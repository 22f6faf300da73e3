/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/block_parameters.h"
#include "plumbing/transport_block_pdu.h"
#include "tb_stream_decoder_impl.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {
const pmt::pmt_t k_crc_ok_key = pmt::mp("crc_ok");
/// A transport block is a whole unit of work: whatever blocks wait are decoded
/// at once (a batch grows by itself when the decoder falls behind), so a live
/// stream's blocks come out without waiting for others.
constexpr std::chrono::milliseconds k_default_max_wait{ 0 };
constexpr int k_buffered_batches = 2;
/// Batches in flight with device buffers: one decoding while the next is queued.
constexpr int k_pipeline_slots = 2;
} // namespace

tb_stream_decoder::sptr tb_stream_decoder::make(int A,
                                                int G,
                                                int Qm,
                                                int NL,
                                                int rv,
                                                int llrs_per_item,
                                                const std::string& algorithm,
                                                int iterations,
                                                double extrinsic_scale,
                                                int window,
                                                const std::string& backend,
                                                int max_blocks,
                                                bool device_buffers,
                                                const std::string& code)
{
    const transport_block_code chosen = transport_block_code_from_string(code);
    if (llrs_per_item < 1 || G % llrs_per_item != 0)
        throw std::invalid_argument(
            "tb_stream_decoder: llrs_per_item must divide G = " + std::to_string(G) +
            ", got " + std::to_string(llrs_per_item));
    if (max_blocks < 0)
        throw std::invalid_argument(
            "tb_stream_decoder: max_blocks must be >= 0 (0: chosen from G), got " +
            std::to_string(max_blocks));
    if (max_blocks ==
        0) // up to about 2^22 LLRs a call: batches that fill a GPU, whole blocks
        max_blocks = int(std::clamp<int64_t>(int64_t(1 << 22) / std::max(G, 1), 1, 256));
    // A batch's LLRs (and GNU Radio's buffer of two batches) must stay far within int.
    if (uint64_t(max_blocks) * uint64_t(G) > (uint64_t(1) << 27))
        throw std::invalid_argument(
            "tb_stream_decoder: max_blocks * G must be at most 2^27 LLRs, got " +
            std::to_string(max_blocks) + " * " + std::to_string(G));
    const auto backend_wanted = ::mimo_gpu::backend_from_string(backend);
    const ::mimo_gpu::transport_block_decoder_factory make_decoder = [=] {
        return make_transport_block_code_decoder(chosen,
                                                 A,
                                                 G,
                                                 Qm,
                                                 NL,
                                                 rv,
                                                 algorithm,
                                                 iterations,
                                                 extrinsic_scale,
                                                 window,
                                                 backend_wanted);
    };
    auto decoder = make_decoder();
    // Device buffers where the decoder runs on CUDA; host buffers on the CPU.
    const bool device =
        device_buffers && decoder->active_backend() == ::mimo_gpu::backend::cuda;
    return gnuradio::make_block_sptr<tb_stream_decoder_impl>(
        std::move(decoder), make_decoder, llrs_per_item, max_blocks, device);
}

tb_stream_decoder_impl::tb_stream_decoder_impl(
    std::unique_ptr<::mimo_gpu::transport_block_code_decoder> decoder,
    const ::mimo_gpu::transport_block_decoder_factory& make_decoder,
    int llrs_per_item,
    int max_blocks,
    bool device_buffers)
    : gr::block(
          "tb_stream_decoder",
          // An ordinary input type even with device buffers (device_buffer.h says why).
          gr::io_signature::make(1, 1, llrs_per_item * int(sizeof(float))),
          gr::io_signature::make(1,
                                 1,
                                 decoder->A(),
                                 device_buffers ? device_buffer::type
                                                : gr::buffer_double_mapped::type)),
      d_decoder(std::move(decoder)),
      d_items_per_block(d_decoder->G() / llrs_per_item),
      d_rv(d_decoder->rv()),
      d_max_blocks(max_blocks),
      d_gate(max_blocks, k_buffered_batches, k_default_max_wait)
{
    if (device_buffers)
        d_pipeline = std::make_unique<::mimo_gpu::transport_block_pipeline>(
            make_decoder, k_pipeline_slots, size_t(max_blocks));
    // GNU Radio sizes the LLR buffer for whole batches from this rate and the
    // output multiple (whole batches of blocks, see batch_gate).
    set_relative_rate(1, uint64_t(d_items_per_block));
    d_gate.install(*this);
    set_tag_propagation_policy(TPP_DONT);
    d_logger->info(
        "{}: A {} -> G {} ({} code block(s)), up to {} transport blocks a call, on {}{}",
        d_decoder->code(),
        d_decoder->A(),
        d_decoder->G(),
        d_decoder->code_blocks(),
        max_blocks,
        active_backend(),
        device_buffers ? " (device buffers)" : "");
}

void tb_stream_decoder_impl::set_rv(int rv)
{
    if (rv < 0 || rv > 3)
        throw std::invalid_argument("rv must be 0..3, got " + std::to_string(rv));
    d_rv = rv; // from the next batch on
}

int tb_stream_decoder_impl::rv() const { return d_rv; }

std::string tb_stream_decoder_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_decoder->active_backend());
}

uint64_t tb_stream_decoder_impl::blocks() const { return d_blocks; }

uint64_t tb_stream_decoder_impl::crc_failures() const { return d_crc_failures; }

uint64_t tb_stream_decoder_impl::dropped_llrs() const { return d_dropped_llrs; }

void tb_stream_decoder_impl::set_max_wait_ms(double ms)
{
    if (!std::isfinite(ms) || ms < 0 || ms > 60000)
        throw std::invalid_argument("max_wait_ms must be in [0, 60000], got " +
                                    std::to_string(ms));
    gr::thread::scoped_lock lock(d_mutex);
    d_gate.set_max_wait(*this, std::chrono::milliseconds(std::lround(ms)));
}

double tb_stream_decoder_impl::max_wait_ms() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return double(d_gate.max_wait().count());
}

bool tb_stream_decoder_impl::input_ended() const
{
    const auto d = detail();
    return d && d->input(0)->done();
}

uint64_t tb_stream_decoder_impl::unread_items() const
{
    const auto in = detail()->input(0);
    return in->buffer()->nitems_written() - in->nitems_read();
}

void tb_stream_decoder_impl::forecast(int noutput_items,
                                      gr_vector_int& ninput_items_required)
{
    if (batches_in_flight()) {
        // Batches in flight are handed on (the tail too) without new input.
        ninput_items_required[0] = 0;
        return;
    }
    int wanted = std::min(noutput_items, d_gate.batch_items());
    if (const auto d = detail()) {
        const auto in = d->input(0);
        // done() first: the items written before it are then all counted below.
        if (input_ended()) {
            // Whole blocks may lie past the end of a single-mapped (device) buffer,
            // where items_available() does not see them: asking for one block makes
            // GNU Radio move them. Less than a block left: work() counts it and ends.
            ninput_items_required[0] =
                unread_items() >= uint64_t(d_items_per_block) ? d_items_per_block : 0;
            return;
        }
        const int available = in->items_available();
        gr::thread::scoped_lock lock(d_mutex);
        if (d_gate.due(available / d_items_per_block,
                       false,
                       in->max_possible_items_available() / d_items_per_block))
            wanted = 1; // take whatever whole blocks wait
    }
    ninput_items_required[0] = wanted * d_items_per_block;
}

void tb_stream_decoder_impl::record(const ::mimo_gpu::transport_block_batch& batch,
                                    uint64_t first)
{
    for (const auto& refusal : batch.refused)
        d_logger->error(
            "transport block {}: {}; failed", first + refusal.block, refusal.reason);
    for (size_t t = 0; t < batch.results.size(); ++t)
        if (!batch.results[t].crc_ok) {
            ++d_crc_failures;
            add_item_tag(0, first + t, k_crc_ok_key, pmt::PMT_F);
        }
    d_blocks += batch.results.size();
}

int tb_stream_decoder_impl::drop_tail(int ninput_items)
{
    const uint64_t tail =
        unread_items() * (input_signature()->sizeof_stream_item(0) / sizeof(float));
    d_dropped_llrs += tail;
    if (tail > 0)
        d_logger->warn(
            "{} LLRs at the end of the stream make no whole transport block; dropped",
            tail);
    consume(0, ninput_items);
    return WORK_DONE;
}

int tb_stream_decoder_impl::general_work(int noutput_items,
                                         gr_vector_int& ninput_items,
                                         gr_vector_const_void_star& input_items,
                                         gr_vector_void_star& output_items)
{
    if (d_output_guard.must_stop(*this, *d_logger))
        return WORK_DONE;
    const bool ended = input_ended(); // first, as in forecast()
    const int whole = ninput_items[0] / d_items_per_block;
    const auto llr = static_cast<const float*>(input_items[0]);
    const auto bits = static_cast<uint8_t*>(output_items[0]);
    if (whole == 0 && !batches_in_flight()) {
        if (ended && unread_items() < uint64_t(d_items_per_block))
            return drop_tail(ninput_items[0]); // the tail: no whole block
        return 0;
    }
    // forecast() gated the call: whole batches, what waited max_wait_ms, the end,
    // or batches in flight.
    return d_pipeline ? pipelined_work(noutput_items, whole, ended, llr, bits)
                      : host_work(noutput_items, whole, llr, bits);
}

int tb_stream_decoder_impl::host_work(int noutput_items,
                                      int whole,
                                      const float* llr,
                                      uint8_t* bits)
{
    const int count = std::min({ whole, noutput_items, d_gate.batch_items() });
    {
        gr::thread::scoped_lock lock(d_mutex);
        d_gate.taken();
    }
    if (const int rv = d_rv; rv != d_decoder->rv())
        d_decoder->set_redundancy_version(rv);
    d_trace.begin();
    ::mimo_gpu::transport_block_batch batch;
    try {
        try {
            batch.results = d_decoder->decode(llr, size_t(count), bits);
        } catch (const std::invalid_argument&) { // non-finite LLRs somewhere
            batch =
                ::mimo_gpu::decode_block_by_block(*d_decoder, llr, size_t(count), bits);
        }
    } catch (const std::exception& e) {
        d_logger->error(
            "transport blocks {}..: {}; ending the stream", nitems_written(0), e.what());
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    record(batch, nitems_written(0));
    consume(0, count * d_items_per_block);
    produce(0, count);
    d_trace.end(long(count));
    return WORK_CALLED_PRODUCE;
}

int tb_stream_decoder_impl::pipelined_work(
    int noutput_items, int whole, bool ended, const float* llr, uint8_t* bits)
{
    d_trace.begin();
    // GNU Radio calls with at least the output multiple, two full batches, and
    // at most one batch is in flight when a call begins (a call that submits
    // collects the earlier ones): room for one more.
    const int count = std::min({ whole,
                                 noutput_items - int(d_pipeline->blocks_in_flight()),
                                 d_gate.batch_items() });
    bool submitted = false;
    if (count > 0 && d_pipeline->pending() < d_pipeline->slots()) {
        gr::thread::scoped_lock lock(d_mutex);
        const auto in = detail()->input(0);
        submitted = d_gate.due(
            whole, ended, in->max_possible_items_available() / d_items_per_block);
        if (submitted)
            d_gate.taken();
    }
    if (submitted) {
        try {
            d_pipeline->submit(llr, size_t(count), d_rv);
        } catch (const std::exception& e) {
            d_logger->error("transport blocks {}..: {}; ending the stream",
                            nitems_written(0) + d_pipeline->blocks_in_flight(),
                            e.what());
            collect(0, noutput_items, bits); // the batches before it
            return WORK_DONE;
        }
        consume(0, count * d_items_per_block); // the pipeline has its own copy
    }
    // Batches of earlier calls (all but the one just submitted); every batch
    // when nothing new went in (a pause, the end), so a frame is handed on as
    // soon as it is decoded.
    const int produced = collect(submitted ? 1 : 0, noutput_items, bits);
    if (produced < 0) // a batch failed: the stream ends after the ones before it
        return WORK_DONE;
    d_trace.end(long(produced));
    return WORK_CALLED_PRODUCE;
}

/// Produces what it hands on; -1 (after producing the batches before it) when a
/// batch failed.
int tb_stream_decoder_impl::collect(size_t keep, int room, uint8_t* bits)
{
    int produced = 0;
    while (d_pipeline->pending() > keep) {
        const int blocks = int(d_pipeline->oldest_count());
        if (produced + blocks > room)
            break; // unreachable with GNU Radio's output multiple; the next call
        // collect() takes the batch, whether it succeeds or not.
        const uint64_t first = nitems_written(0) + uint64_t(produced);
        try {
            record(d_pipeline->collect(bits + size_t(produced) * size_t(d_decoder->A())),
                   first);
        } catch (const std::exception& e) {
            d_logger->error(
                "transport blocks {}..: {}; ending the stream", first, e.what());
            produce(0, produced);
            return -1;
        }
        produced += blocks;
    }
    produce(0, produced);
    return produced;
}

bool tb_stream_decoder_impl::stop()
{
    // A flowgraph stopped with batches in flight: they are decoded but no longer
    // handed on; said so, and a restart begins with an empty pipeline.
    if (batches_in_flight()) {
        const size_t blocks = d_pipeline->blocks_in_flight();
        std::vector<uint8_t> scratch(blocks * size_t(d_decoder->A()));
        while (d_pipeline->pending() > 0) {
            try {
                d_pipeline->collect(scratch.data()); // leaves even when it throws
            } catch (const std::exception& e) {
                d_logger->error("transport blocks in flight at stop: {}", e.what());
            }
        }
        d_logger->warn(
            "{} transport block(s) in flight when the flowgraph stopped: not handed on",
            blocks);
    }
    return true;
}

} // namespace mimo_gpu
} // namespace gr
