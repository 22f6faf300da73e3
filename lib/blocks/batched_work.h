/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// How a block hands its items to the core: in batches of at most max_batch
// problems, with core exceptions kept from escaping work().
#ifndef INCLUDED_MIMO_GPU_BATCHED_WORK_H
#define INCLUDED_MIMO_GPU_BATCHED_WORK_H

#include <gnuradio/logger.h>

#include <cstddef>
#include <functional>

namespace gr {
namespace mimo_gpu {

/// Calls core_call(first_item, count) over [begin, end) in chunks of at most max_batch.
void for_each_batch(int begin, int end, size_t max_batch, const std::function<void(int, int)>& core_call);

/// Runs the core calls of one work() call and returns noutput_items. An
/// exception (bad input such as a non-finite H, or a CUDA failure) is logged
/// and ends this block's stream (WORK_DONE): GNU Radio 3.10 would otherwise
/// only log it and end the block's thread, leaving the flowgraph hanging.
int guarded_work(const gr::logger_ptr& logger, int noutput_items, const std::function<void()>& work);

} // namespace mimo_gpu
} // namespace gr

#endif
