/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/device_memory.h>

#include <gnuradio/block.h>
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {

std::atomic<bool> g_simulated{ false };

void* copy_on_device(void* dst, const void* src, size_t bytes)
{
    ::mimo_gpu::copy_memory(
        dst, src, bytes, ::mimo_gpu::copy_direction::device_to_device);
    return dst;
}

} // namespace

gr::buffer_type device_buffer::type(gr::buftype<device_buffer, device_buffer>{});

std::string device_outputs_stall(const gr::block& writer)
{
    const auto detail = writer.detail();
    if (!detail || detail->noutputs() < 2)
        return "";
    for (int port = 0; port < detail->noutputs(); ++port) {
        const auto buffer = detail->output(port);
        if (!dynamic_cast<device_buffer*>(buffer.get()))
            continue;
        for (size_t r = 0; r < buffer->nreaders(); ++r) {
            const auto reader = buffer->reader(r)->link();
            if (reader->history() > 1)
                return reader->alias() + " (history " +
                       std::to_string(reader->history()) + ") reads output " +
                       std::to_string(port) + " of " + writer.alias() +
                       ", a block with several device-buffer outputs: GNU Radio 3.10's "
                       "single-mapped buffers stall in that shape. Give " +
                       writer.alias() +
                       " host buffers (device_buffers=False), or put a block without "
                       "history between them";
        }
    }
    return "";
}

void device_buffer::simulate_device_memory(bool on) { g_simulated = on; }

gr::buffer_sptr device_buffer::make_buffer(int nitems,
                                           size_t sizeof_item,
                                           uint64_t downstream_lcm_nitems,
                                           uint32_t downstream_max_out_mult,
                                           gr::block_sptr link,
                                           gr::block_sptr buf_owner)
{
    return gr::buffer_sptr(new device_buffer(nitems,
                                             sizeof_item,
                                             downstream_lcm_nitems,
                                             downstream_max_out_mult,
                                             link,
                                             buf_owner));
}

device_buffer::device_buffer(int nitems,
                             size_t sizeof_item,
                             uint64_t downstream_lcm_nitems,
                             uint32_t downstream_max_out_mult,
                             gr::block_sptr link,
                             gr::block_sptr buf_owner)
    : gr::buffer_single_mapped(nitems,
                               sizeof_item,
                               downstream_lcm_nitems,
                               downstream_max_out_mult,
                               link,
                               buf_owner),
      m_simulated(g_simulated)
{
    gr::configure_default_loggers(d_logger, d_debug_logger, "device_buffer");
    if (!allocate_buffer(nitems))
        throw std::bad_alloc();
}

device_buffer::~device_buffer()
{
    if (m_simulated) {
        std::free(m_device);
        std::free(m_host);
    } else {
        ::mimo_gpu::free_device(m_scratch);
        ::mimo_gpu::free_device(m_device);
        if (m_host_locked)
            ::mimo_gpu::unlock_host_memory(m_host);
        std::free(m_host);
    }
}

bool device_buffer::allocate_buffer(int nitems)
{
    // As buffer_single_mapped::allocate_buffer (GNU Radio 3.10): at least four of
    // the readers' largest output multiple, the end aligned with the writer's
    // granularity (its rate, its output multiple) and the readers' (their rates).
    // That lcm explodes for granularities with different prime factors: a
    // detector's batch of 16 796 received vectors (4 * 13 * 17 * 19) before a
    // decoder of 85 176 a block (8 * 9 * 7 * 169) is 27.5 M items, 1.8-2.6 GB of
    // device memory for NR 100 MHz, whose moves at the end cost milliseconds
    // (0.6 ms a frame at 64-QAM on the H100). The blocked callbacks move unread
    // items wherever the end falls, so past 4x the size asked only the readers'
    // granularity is kept.
    // GNU Radio's "four of the readers' output multiple" counts a reader's output
    // items as input items, true at rate 1 only: an interpolating reader of large
    // items (ofdm_tx: one frame's bits, 1.4 MB at NR 100 MHz, in, 127 136 samples
    // out) would ask for 4 * 127 136 of them, 690 GB. Such a term is left out
    // when it is far beyond both the size asked and 256 MB; the readers' forecasts
    // then meet the buffer GNU Radio sized for the writer.
    uint64_t reader_term = 4 * uint64_t(d_max_reader_output_multiple);
    if (reader_term > 16 * uint64_t(std::max(nitems, 1)) &&
        reader_term * d_sizeof_item > (uint64_t(256) << 20))
        reader_term = 0;
    uint64_t n = std::max<uint64_t>(uint64_t(std::max(nitems, 1)), reader_term);
    const gr::block_sptr writer = link();
    uint64_t write_granularity = 1;
    if (writer->fixed_rate()) {
        const int inputs =
            writer->fixed_rate_noutput_to_ninput(1) - (int(writer->history()) - 1);
        write_granularity = uint64_t(
            writer->fixed_rate_ninput_to_noutput(inputs + (int(writer->history()) - 1)));
    }
    if (writer->relative_rate() != 1.0)
        write_granularity = writer->relative_rate_i();
    if (writer->output_multiple_set())
        write_granularity =
            std::lcm(write_granularity, uint64_t(writer->output_multiple()));
    const uint64_t readers = std::max<uint64_t>(d_downstream_lcm_nitems, 1);
    const uint64_t both = std::lcm(std::max<uint64_t>(write_granularity, 1), readers);
    const uint64_t align = both <= 4 * n ? both : readers;
    n = (n + align - 1) / align * align;
    if (n > uint64_t(std::numeric_limits<int>::max()))
        return false;
    d_bufsize = unsigned(n);
    d_write_multiple = write_granularity;
    return do_allocate_buffer(size_t(n), d_sizeof_item);
}

bool device_buffer::do_allocate_buffer(size_t final_nitems, size_t sizeof_item)
{
    m_bytes = final_nitems * sizeof_item;
    if (m_simulated) {
        m_host = static_cast<char*>(std::calloc(m_bytes, 1));
        m_device = static_cast<char*>(std::calloc(m_bytes, 1));
        if (!m_host || !m_device)
            throw std::bad_alloc();
        d_base = m_host;
        return true;
    }
    m_device = static_cast<char*>(::mimo_gpu::allocate_device(m_bytes));
    // Zeros, as GNU Radio's own buffers hold before anything is written: a
    // reader with history starts by reading items "before" the first.
    ::mimo_gpu::zero_device_memory(m_device, m_bytes);
    // The host side: ordinary memory whose pages the system gives on first touch
    // (zeros), page-locked only when a reader is on the host
    // (decide_readers_side_once). A chain on the GPU never touches it: locking a
    // decoder's input of hundreds of MB up front took 0.9 s of an NR 100 MHz
    // chain's start on the H100 host.
    m_host = static_cast<char*>(std::calloc(m_bytes, 1));
    if (!m_host)
        throw std::bad_alloc();
    d_base = m_device; // GNU Radio only computes with it
    return true;
}

void device_buffer::decide_readers_side()
{
    // The writer's and the readers' threads ask; the first decides for all.
    std::call_once(m_decided, [this] { decide_readers_side_once(); });
}

void device_buffer::decide_readers_side_once()
{
    bool all_device = nreaders() > 0;
    for (size_t r = 0; r < nreaders(); ++r) {
        const auto reader_block = reader(r)->link();
        const auto device_reader =
            dynamic_cast<const device_stream_reader*>(reader_block.get());
        all_device = all_device && device_reader && device_reader->reads_device_memory();
    }
    m_readers_on_device = all_device;
    if (!all_device && !m_simulated) {
        // Transfers from ordinary memory work too, at a lower rate: a refusal is
        // logged, never thrown (this runs in the scheduler).
        const std::string why = ::mimo_gpu::lock_host_memory(m_host, m_bytes);
        m_host_locked = why.empty();
        if (!m_host_locked)
            d_logger->info("host side in ordinary memory: {}", why);
        d_base = m_host;
    }
}

void device_buffer::copy(
    char* dst, const char* src, size_t bytes, bool dst_device, bool src_device)
{
    if (bytes == 0)
        return;
    if (m_simulated) {
        std::memcpy(dst, src, bytes);
        return;
    }
    ::mimo_gpu::copy_memory(
        dst,
        src,
        bytes,
        dst_device ? (src_device ? ::mimo_gpu::copy_direction::device_to_device
                                 : ::mimo_gpu::copy_direction::host_to_device)
                   : ::mimo_gpu::copy_direction::device_to_host);
}

void* device_buffer::write_pointer()
{
    decide_readers_side();
    return m_device + size_t(d_write_index) * d_sizeof_item;
}

const void* device_buffer::_read_pointer(unsigned int read_index)
{
    decide_readers_side();
    return reader_side() + size_t(read_index) * d_sizeof_item;
}

void device_buffer::post_work(int nitems)
{
    if (nitems <= 0 || m_readers_on_device)
        return;
    // The write index has not advanced yet: the new items start there.
    const size_t offset = size_t(d_write_index) * d_sizeof_item;
    try {
        copy(m_host + offset,
             m_device + offset,
             size_t(nitems) * d_sizeof_item,
             false,
             true);
    } catch (const std::exception& e) {
        // Runs in the scheduler, outside work(): an exception here would end the
        // writer's thread and hang the flowgraph. The writer checks failed().
        d_logger->error("copying items to the host: {}", e.what());
        m_failed = true;
    }
}

bool device_buffer::failed() const { return m_failed; }

gr::mem_func_t device_buffer::device_move()
{
    // One scratch region of the buffer's size, made on the first move: a move per
    // wrap-around must not pay a cudaMalloc and a device-wide cudaFree.
    if (!m_scratch)
        m_scratch = static_cast<char*>(
            ::mimo_gpu::allocate_device(size_t(d_bufsize) * d_sizeof_item));
    return [this](void* dst, const void* src, size_t bytes) {
        ::mimo_gpu::move_device_memory(dst, src, bytes, m_scratch);
        return dst;
    };
}

bool device_outputs_failed(const gr::block& writer)
{
    const auto detail = writer.detail();
    for (int port = 0; detail && port < detail->noutputs(); ++port)
        if (const auto* b =
                dynamic_cast<const device_buffer*>(detail->output(port).get()))
            if (b->failed())
                return true;
    return false;
}

bool device_buffer::input_blocked_callback(int items_required,
                                           int items_avail,
                                           unsigned read_index)
{
    // Unread items move where the readers read them. The writer's side needs no
    // such move: post_work copies each new item to the readers' side at its index.
    decide_readers_side();
    try {
        return m_readers_on_device && !m_simulated
                   ? input_blocked_callback_logic(items_required,
                                                  items_avail,
                                                  read_index,
                                                  m_device,
                                                  copy_on_device,
                                                  device_move())
                   : input_blocked_callback_logic(items_required,
                                                  items_avail,
                                                  read_index,
                                                  reader_side(),
                                                  std::memcpy,
                                                  std::memmove);
    } catch (const std::exception& e) {
        d_logger->error("moving unread items: {}", e.what());
        m_failed = true;
        return false;
    }
}

bool device_buffer::output_blocked_callback(int output_multiple, bool force)
{
    decide_readers_side();
    try {
        return m_readers_on_device && !m_simulated
                   ? output_blocked_callback_logic(
                         output_multiple, force, m_device, device_move())
                   : output_blocked_callback_logic(
                         output_multiple, force, reader_side(), std::memmove);
    } catch (const std::exception& e) {
        d_logger->error("moving unread items: {}", e.what());
        m_failed = true;
        return false;
    }
}

} // namespace mimo_gpu
} // namespace gr
