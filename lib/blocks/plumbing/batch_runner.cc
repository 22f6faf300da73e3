/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "batch_runner.h"

#include <gnuradio/block.h>

#include <algorithm>
#include <exception>

namespace gr {
namespace mimo_gpu {

batch_runner::batch_runner(size_t max_batch, gr::logger_ptr logger, int items_per_unit)
    : m_max_batch(max_batch),
      m_logger(std::move(logger)),
      m_items_per_unit(uint64_t(items_per_unit))
{
}

bool batch_runner::start(uint64_t first_stream_item)
{
    m_first_stream_item = first_stream_item;
    return !m_failed;
}

void batch_runner::run(int begin, int end, const std::function<void(int, int)>& core_call)
{
    for (int first = begin; first < end && !m_failed;) {
        const int count = static_cast<int>(std::min<size_t>(m_max_batch, end - first));
        try {
            core_call(first, count);
        } catch (const std::exception& e) {
            m_logger->error("stream items {}..{}: {}; ending the stream",
                            m_first_stream_item + first * m_items_per_unit,
                            m_first_stream_item + (first + count) * m_items_per_unit - 1,
                            e.what());
            m_failed = true;
            m_done_before_failure = first;
            return;
        }
        first += count;
    }
}

int batch_runner::finish(int noutput_items) const
{
    if (!m_failed)
        return noutput_items;
    return m_done_before_failure > 0 ? m_done_before_failure : gr::block::WORK_DONE;
}

} // namespace mimo_gpu
} // namespace gr
