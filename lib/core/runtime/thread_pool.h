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
/// caller runs its own queued tasks while it waits (never another call's: one
/// could take far longer than its own), so a task may itself call run_tasks.
void run_tasks(size_t tasks, const std::function<void(size_t)>& task);

/// Threads that run tasks: the pool's workers plus the caller.
size_t worker_count();

/// How many parts a batch of the calling thread may be split into: the cores
/// less those the other calling threads kept busy lately (their CPU time over
/// the last ~10 ms; at least 1). The pool's own threads are not callers: their
/// time is the callers' work (on one of them, every caller is another). A flowgraph's
/// blocks each run on a thread of their own; where they already keep every core busy
/// (three CPU blocks on a 2-core laptop at real time), handing parts of a batch to the
/// pool only adds wake-ups and context switches (lte5 2x2 MMSE on 2 cores: 0.94-1.12x
/// real time split, 1.16-1.26x not), while a block the others wait for (a slow detector)
/// still gets the cores they leave idle. A thread alone gets every core.
size_t parallel_width();

/// Whether parallel_width() keeps this thread's CPU time (a slot of its own:
/// given back when a thread ends, so only many live threads are left out).
bool measures_this_thread();

/// parallel_width()'s rule: the parts for a thread beside others that kept
/// `others_busy_permille` thousandths of a core busy: 1 unless 1.3 cores are
/// free, else the free cores rounded (at least 2).
size_t share_of_cores(size_t cores, int others_busy_permille);

} // namespace detail
} // namespace mimo_gpu
