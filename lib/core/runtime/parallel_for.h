// Splits a batch over the machine's cores for the CPU backend.
#pragma once

#include "thread_pool.h"

#include <algorithm>
#include <cstddef>
#include <thread>

namespace mimo_gpu {
namespace detail {

/// Calls body(begin, end) on contiguous chunks of [0, count) on the process's
/// worker threads (thread_pool.h) and the caller, in at most parallel_width()
/// chunks. Batches smaller than `min_per_thread * 2` run on the calling thread
/// alone. The first exception
/// thrown by a chunk is rethrown after all chunks finish.
template <typename Body>
void parallel_for(size_t count, size_t min_per_thread, Body body)
{
    const size_t cores = parallel_width(); // the cores this thread may use now
    const size_t threads = std::min(cores, count / std::max<size_t>(min_per_thread, 1));
    if (threads <= 1) {
        body(size_t(0), count);
        return;
    }
    const size_t chunk = (count + threads - 1) / threads;
    const size_t chunks = (count + chunk - 1) / chunk;
    run_tasks(chunks,
              [&](size_t k) { body(k * chunk, std::min(count, (k + 1) * chunk)); });
}

} // namespace detail
} // namespace mimo_gpu
