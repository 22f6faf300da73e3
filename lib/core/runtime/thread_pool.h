// The CPU backend's worker threads: made once per process and reused by every
// parallel_for, so a batch pays a wake-up (a few microseconds) instead of
// starting and joining threads (~20 us each) every call, which dominated the
// small batches a flowgraph hands over.
#pragma once

#include <cstddef>
#include <functional>

namespace mimo_gpu {
namespace detail {

/// Runs task(k) for k in [0, tasks) on the pool and the calling thread, and
/// returns when all have run; rethrows the first exception a task threw. The
/// caller runs queued tasks while it waits, so a task may itself call run_tasks.
void run_tasks(size_t tasks, const std::function<void(size_t)>& task);

/// Threads that run tasks: the pool's workers plus the caller.
size_t worker_count();

} // namespace detail
} // namespace mimo_gpu
