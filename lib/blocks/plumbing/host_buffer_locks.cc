/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "host_buffer_locks.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/device_memory.h>

namespace gr {
namespace mimo_gpu {

std::string host_buffer_locks::lock_buffer(const gr::buffer_sptr& buffer)
{
    if (!buffer || dynamic_cast<device_buffer*>(buffer.get()))
        return "";
    // A double-mapped buffer is the same pages twice in a row: both views.
    const size_t views =
        buffer->get_mapping_type() == gr::buffer_mapping_type::double_mapped ? 2 : 1;
    void* base = const_cast<char*>(buffer->base());
    const std::string why = ::mimo_gpu::lock_host_memory(
        base, views * size_t(buffer->bufsize()) * buffer->get_sizeof_item());
    if (why.empty())
        m_locked.push_back(base);
    return why;
}

std::string host_buffer_locks::lock(gr::block& b, bool inputs, bool outputs)
{
    const gr::block_detail_sptr d = b.detail();
    std::string why;
    for (int i = 0; d && inputs && i < d->ninputs() && why.empty(); ++i)
        why = lock_buffer(d->input(i)->buffer());
    for (int i = 0; d && outputs && i < d->noutputs() && why.empty(); ++i)
        why = lock_buffer(d->output(i));
    if (!why.empty())
        unlock();
    return why;
}

void host_buffer_locks::unlock()
{
    for (void* p : m_locked)
        ::mimo_gpu::unlock_host_memory(p);
    m_locked.clear();
}

} // namespace mimo_gpu
} // namespace gr
