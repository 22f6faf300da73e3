/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "batch_gate.h"

#include <algorithm>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

batch_gate::batch_gate(int batch_items,
                       int buffered_batches,
                       std::chrono::milliseconds max_wait)
    : m_batch(batch_items), m_buffered_batches(buffered_batches), m_max_wait(max_wait)
{
    if (batch_items < 1 || buffered_batches < 1)
        throw std::invalid_argument("batch_gate: a batch has at least one item");
}

void batch_gate::install(gr::block& block) const
{
    block.set_output_multiple(m_batch * m_buffered_batches);
    install_timer(block);
}

void batch_gate::set_max_wait(gr::block& block, std::chrono::milliseconds max_wait)
{
    m_max_wait = max_wait;
    install_timer(block);
}

void batch_gate::install_timer(gr::block& block) const
{
    // Blocked on input, the scheduler runs the block again after this long, so
    // that a partial batch goes after max_wait. With max_wait 0 whatever waits
    // is taken at once and nothing needs re-checking: GNU Radio's own interval
    // (a 1 ms timer woke an idle block a thousand times a second).
    constexpr long k_scheduler_default_ms = 250;
    block.set_blkd_input_timer_value(static_cast<unsigned>(
        m_max_wait.count() > 0 ? m_max_wait.count() : k_scheduler_default_ms));
}

bool batch_gate::due(int waiting, bool ended, int capacity)
{
    if (waiting <= 0) {
        m_waiting_since.reset();
        return false;
    }
    if (ended || waiting >= std::min(m_batch, std::max(1, capacity)))
        return true;
    const auto now = std::chrono::steady_clock::now();
    if (!m_waiting_since)
        m_waiting_since = now;
    return now - *m_waiting_since >= m_max_wait;
}

} // namespace mimo_gpu
} // namespace gr
