/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_BATCH_GATE_H
#define INCLUDED_MIMO_GPU_BATCH_GATE_H

#include <gnuradio/block.h>

#include <chrono>
#include <optional>

namespace gr {
namespace mimo_gpu {

/// When a GPU block's work() takes new items: once a whole batch waits, or
/// whatever waits once the stream has ended or the oldest waiting item has
/// waited max_wait (a live stream that pauses is not held back).
///
/// GNU Radio hands a block what its upstream buffer holds, by default 32 KiB
/// (256 4x4 channel matrices): a GPU block called that often spends its time on
/// per-call costs. The block asks for whole batches in forecast(), and
/// install() sets its output multiple to `buffered_batches` batches, which makes
/// GNU Radio size every upstream buffer for twice that (flat_flowgraph gives an
/// edge at least twice its reader's output multiple), so the upstream blocks
/// keep running while batches are in flight.
class batch_gate
{
public:
    /// batch_items: items of the gated (rate-1) input per batch.
    batch_gate(int batch_items, int buffered_batches, std::chrono::milliseconds max_wait);

    /// Sets the block's output multiple and the scheduler's re-check interval
    /// while it is blocked on input (max_wait); from the block's constructor.
    void install(gr::block& block) const;

    int batch_items() const { return m_batch; }
    std::chrono::milliseconds max_wait() const { return m_max_wait; }
    /// Changes max_wait, and the block's re-check interval with it.
    void set_max_wait(gr::block& block, std::chrono::milliseconds max_wait);

    /// Whether the `waiting` items (not yet taken) are to be taken now. `ended`:
    /// no more will come; `capacity`: most items that can ever wait at once.
    bool due(int waiting, bool ended, int capacity);

    /// A work() call took the waiting items: the wait starts again.
    void taken() { m_waiting_since.reset(); }

private:
    int m_batch;
    int m_buffered_batches;
    std::chrono::milliseconds m_max_wait;
    void install_timer(gr::block& block) const;
    std::optional<std::chrono::steady_clock::time_point> m_waiting_since;
};

} // namespace mimo_gpu
} // namespace gr

#endif
