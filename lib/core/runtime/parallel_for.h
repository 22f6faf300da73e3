// Splits a batch over the machine's cores for the CPU backend.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// Calls body(begin, end) on contiguous chunks of [0, count). Batches smaller
/// than `min_per_thread * 2` run on the calling thread (thread start costs ~20 us).
/// The first exception thrown by a chunk is rethrown after all chunks finish.
template <typename Body>
void parallel_for(size_t count, size_t min_per_thread, Body body)
{
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t threads = std::min(cores, count / std::max<size_t>(min_per_thread, 1));
    if (threads <= 1) {
        body(size_t(0), count);
        return;
    }
    std::exception_ptr error;
    std::mutex error_mutex;
    std::vector<std::thread> pool;
    const size_t chunk = (count + threads - 1) / threads;
    for (size_t t = 0; t < threads; ++t) {
        const size_t begin = t * chunk, end = std::min(count, begin + chunk);
        if (begin >= end)
            break;
        pool.emplace_back([&, begin, end] {
            try {
                body(begin, end);
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error)
                    error = std::current_exception();
            }
        });
    }
    for (auto& th : pool)
        th.join();
    if (error)
        std::rethrow_exception(error);
}

} // namespace detail
} // namespace mimo_gpu
