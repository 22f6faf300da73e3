// The CPU backend's shared worker threads (lib/core/runtime/thread_pool.h).
#include "../../lib/core/runtime/parallel_for.h"
#include "../../lib/core/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using mimo_gpu::detail::parallel_for;
using mimo_gpu::detail::run_tasks;

TEST(thread_pool, every_task_runs_once)
{
    for (size_t tasks : { size_t(1), size_t(2), size_t(7), size_t(1000) }) {
        std::vector<std::atomic<int>> runs(tasks);
        run_tasks(tasks, [&](size_t k) { ++runs[k]; });
        for (size_t k = 0; k < tasks; ++k)
            ASSERT_EQ(runs[k].load(), 1) << "task " << k << " of " << tasks;
    }
}

TEST(thread_pool, parallel_for_covers_the_range_in_chunks)
{
    std::vector<std::atomic<int>> seen(10007);
    parallel_for(seen.size(), 16, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
            ++seen[i];
    });
    for (size_t i = 0; i < seen.size(); ++i)
        ASSERT_EQ(seen[i].load(), 1) << i;
}

TEST(thread_pool, the_first_exception_is_rethrown_after_all_tasks)
{
    std::atomic<int> ran{ 0 };
    EXPECT_THROW(run_tasks(64,
                           [&](size_t k) {
                               ++ran;
                               if (k % 10 == 3)
                                   throw std::runtime_error("task failed");
                           }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 64);
    // The pool still works afterwards.
    std::atomic<int> again{ 0 };
    run_tasks(8, [&](size_t) { ++again; });
    EXPECT_EQ(again.load(), 8);
}

TEST(thread_pool, nested_and_concurrent_callers_do_not_deadlock)
{
    // Tasks that themselves split work (a detector called from a pipeline
    // worker inside another parallel loop), from several threads at once:
    // waiting callers run queued tasks, so nothing waits on a busy pool.
    std::atomic<long> total{ 0 };
    std::vector<std::thread> callers;
    for (int c = 0; c < 4; ++c)
        callers.emplace_back([&] {
            for (int round = 0; round < 20; ++round)
                run_tasks(8, [&](size_t) { run_tasks(8, [&](size_t) { ++total; }); });
        });
    for (auto& t : callers)
        t.join();
    EXPECT_EQ(total.load(), 4L * 20 * 8 * 8);
}

TEST(thread_pool, threads_busy_at_once_share_the_cores)
{
    // A flowgraph's CPU blocks each call from a thread of their own: a batch is
    // split among the cores the other calling threads leave, so blocks that keep
    // every core busy do not also hand parts to the pool.
    using mimo_gpu::detail::parallel_width;
    using namespace std::chrono_literals;
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    std::this_thread::sleep_for(80ms); // the earlier tests' threads fall quiet
    EXPECT_EQ(parallel_width(), cores) << "a thread alone gets every core";

    std::atomic<bool> stop{ false };
    std::atomic<int> asked{ 0 };
    std::vector<std::thread> busy;
    for (int i = 0; i < 2; ++i)
        busy.emplace_back([&] {
            parallel_width();
            ++asked;
            while (!stop) {
                parallel_width();
                std::this_thread::sleep_for(1ms);
            }
        });
    while (asked < 2)
        std::this_thread::yield();
    const size_t share = cores > 2 ? cores - 2 : 1;
    EXPECT_EQ(parallel_width(), share) << "two other threads busy";
    std::atomic<int> chunks{ 0 };
    parallel_for(1000, 1, [&](size_t, size_t) { ++chunks; });
    EXPECT_EQ(size_t(chunks.load()), share);
    stop = true;
    for (auto& t : busy)
        t.join();
    std::this_thread::sleep_for(80ms);
    EXPECT_EQ(parallel_width(), cores) << "the others quiet again";
}
