/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "host_buffer_locks.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/device_memory.h>

#include <map>
#include <mutex>

namespace gr {
namespace mimo_gpu {

namespace {

/// Every buffer locked in the process, with how many holders it has.
struct lock_registry {
    std::mutex mutex;
    std::map<void*, int> holders;
};

lock_registry& registry()
{
    static lock_registry r;
    return r;
}

} // namespace

std::string host_buffer_locks::lock_buffer(const gr::buffer_sptr& buffer)
{
    if (!buffer || dynamic_cast<device_buffer*>(buffer.get()))
        return "";
    // A double-mapped buffer is the same pages twice in a row: both views.
    const size_t views =
        buffer->get_mapping_type() == gr::buffer_mapping_type::double_mapped ? 2 : 1;
    void* base = const_cast<char*>(buffer->base());
    lock_registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    const auto held = r.holders.find(base);
    if (held != r.holders.end()) { // locked by the block at its other end
        ++held->second;
        m_locked.push_back(base);
        return "";
    }
    const std::string why = ::mimo_gpu::lock_host_memory(
        base, views * size_t(buffer->bufsize()) * buffer->get_sizeof_item());
    if (why.empty()) {
        r.holders[base] = 1;
        m_locked.push_back(base);
    }
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
    lock_registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    for (void* p : m_locked) {
        const auto held = r.holders.find(p);
        if (held != r.holders.end() && --held->second == 0) {
            ::mimo_gpu::unlock_host_memory(p);
            r.holders.erase(held);
        }
    }
    m_locked.clear();
}

} // namespace mimo_gpu
} // namespace gr
