/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "batched_work.h"

#include <gnuradio/block.h>

#include <algorithm>
#include <exception>

namespace gr {
namespace mimo_gpu {

void for_each_batch(int begin, int end, size_t max_batch, const std::function<void(int, int)>& core_call)
{
    for (int at = begin; at < end;) {
        const int count = static_cast<int>(std::min<size_t>(max_batch, end - at));
        core_call(at, count);
        at += count;
    }
}

int guarded_work(const gr::logger_ptr& logger, int noutput_items, const std::function<void()>& work)
{
    try {
        work();
        return noutput_items;
    } catch (const std::exception& e) {
        logger->error("stopping the stream: {}", e.what());
        return gr::block::WORK_DONE;
    }
}

} // namespace mimo_gpu
} // namespace gr
