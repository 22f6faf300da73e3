/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "device_buffer.h"

#include <gnuradio/block.h>
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <mimo_gpu/device_memory.h>

#include <cstring>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {

void* copy_on_device(void* dst, const void* src, size_t bytes)
{
    ::mimo_gpu::copy_memory(dst, src, bytes, ::mimo_gpu::copy_direction::device_to_device);
    return dst;
}

void* move_on_device(void* dst, const void* src, size_t bytes)
{
    ::mimo_gpu::move_device_memory(dst, src, bytes);
    return dst;
}

} // namespace

gr::buffer_type device_buffer::type(gr::buftype<device_buffer, device_buffer>{});

bool uses_device_buffer(const gr::block& block, int port, bool input)
{
    const auto signature = input ? block.input_signature() : block.output_signature();
    return signature->stream_buffer_type(size_t(port)) == device_buffer::type;
}

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
                               buf_owner)
{
    gr::configure_default_loggers(d_logger, d_debug_logger, "device_buffer");
    if (!allocate_buffer(nitems))
        throw std::bad_alloc();
}

device_buffer::~device_buffer()
{
    ::mimo_gpu::free_device(m_device);
    ::mimo_gpu::free_pinned(m_host);
}

bool device_buffer::do_allocate_buffer(size_t final_nitems, size_t sizeof_item)
{
    const size_t bytes = final_nitems * sizeof_item;
    m_host = static_cast<char*>(::mimo_gpu::allocate_pinned(bytes));
    m_device = static_cast<char*>(::mimo_gpu::allocate_device(bytes));
    d_base = m_host;
    return true;
}

void device_buffer::decide_sides()
{
    if (m_sides_decided)
        return;
    m_sides_decided = true;
    // The writer: the port of the linked block whose output is this buffer.
    const gr::block_sptr writer = link();
    for (int port = 0; writer->detail() && port < writer->detail()->noutputs(); ++port)
        if (writer->detail()->output(port).get() == this)
            m_writer_on_device = uses_device_buffer(*writer, port, false);
    int device_readers = 0, host_readers = 0;
    for (size_t r = 0; r < nreaders(); ++r) {
        const gr::block_sptr block = reader(r)->link();
        for (int port = 0; block->detail() && port < block->detail()->ninputs(); ++port)
            if (block->detail()->input(port)->buffer().get() == this)
                ++(uses_device_buffer(*block, port, true) ? device_readers : host_readers);
    }
    m_readers_on_device = device_readers > 0 && host_readers == 0;
    if (device_readers > 0 && host_readers > 0)
        d_logger->warn("{} feeds GPU and ordinary blocks at once: every reader gets the "
                       "page-locked host copy (GPU blocks read it over PCIe)",
                       writer->alias());
}

void* device_buffer::write_pointer()
{
    decide_sides();
    return writer_side() + size_t(d_write_index) * d_sizeof_item;
}

const void* device_buffer::_read_pointer(unsigned int read_index)
{
    decide_sides();
    return reader_side() + size_t(read_index) * d_sizeof_item;
}

void device_buffer::post_work(int nitems)
{
    if (nitems <= 0 || m_writer_on_device == m_readers_on_device)
        return;
    // The write index has not advanced yet: the new items start there.
    const size_t offset = size_t(d_write_index) * d_sizeof_item,
                 bytes = size_t(nitems) * d_sizeof_item;
    ::mimo_gpu::copy_memory(reader_side() + offset,
                            writer_side() + offset,
                            bytes,
                            m_writer_on_device ? ::mimo_gpu::copy_direction::device_to_host
                                               : ::mimo_gpu::copy_direction::host_to_device);
}

bool device_buffer::input_blocked_callback(int items_required,
                                           int items_avail,
                                           unsigned read_index)
{
    // Unread items are moved where the readers read them; the writer's side
    // receives only new items, copied across by post_work.
    if (m_readers_on_device)
        return input_blocked_callback_logic(items_required,
                                            items_avail,
                                            read_index,
                                            m_device,
                                            copy_on_device,
                                            move_on_device);
    return input_blocked_callback_logic(
        items_required, items_avail, read_index, m_host, std::memcpy, std::memmove);
}

bool device_buffer::output_blocked_callback(int output_multiple, bool force)
{
    if (m_readers_on_device)
        return output_blocked_callback_logic(output_multiple, force, m_device, move_on_device);
    return output_blocked_callback_logic(output_multiple, force, m_host, std::memmove);
}

} // namespace mimo_gpu
} // namespace gr
