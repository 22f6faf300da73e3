/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_BATCH_RUNNER_H
#define INCLUDED_MIMO_GPU_BATCH_RUNNER_H

#include <gnuradio/logger.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace gr {
namespace mimo_gpu {

/// How a block's work() hands its items to the core: in batches of at most
/// max_batch problems, and without letting a core exception escape.
///
/// GNU Radio 3.10 only logs an exception thrown by work() and ends that
/// block's thread: the rest of the flowgraph then waits forever (tb.run()
/// never returns). So a failing core call (bad input such as a non-finite H,
/// or a CUDA error) is logged with the stream items it concerned; the items
/// before it are still produced and the block's stream then ends (WORK_DONE).
class batch_runner
{
public:
    /// items_per_unit: stream items per unit of run()'s ranges (the S received
    /// vectors of a channel), so that errors name stream items.
    batch_runner(size_t max_batch, gr::logger_ptr logger, int items_per_unit = 1);

    /// Starts a work() call whose item 0 is absolute stream item `first_stream_item`;
    /// false once a core call has failed (work() then returns WORK_DONE).
    bool start(uint64_t first_stream_item);
    /// Calls core_call(first, count) over [begin, end) in batches, in order;
    /// does nothing once a core call of this work() call has failed.
    void
    run(int begin, int end, const std::function<void(int first, int count)>& core_call);
    /// What work() returns: noutput_items, or after a failure the items done
    /// before it (WORK_DONE when none).
    int finish(int noutput_items) const;

private:
    size_t m_max_batch;
    gr::logger_ptr m_logger;
    uint64_t m_items_per_unit;
    uint64_t m_first_stream_item = 0;
    bool m_failed = false;
    int m_done_before_failure = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
