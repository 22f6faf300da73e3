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
    // waiting callers run their own queued tasks, so nothing waits on a busy pool.
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

TEST(thread_pool,
     a_caller_waiting_on_a_nested_batch_leaves_the_outer_tasks_to_the_workers)
{
    // A batch of two frames, each splitting its own work (a nested batch)
    // whose tasks hold until the other frame has started. The thread waiting
    // on a frame's nested batch runs that batch's tasks and never the other
    // frame (taken there, the two frames ran one inside the other while the
    // workers had nothing to do). Repeated: which thread takes which frame varies.
    if (mimo_gpu::detail::worker_count() < 2)
        GTEST_SKIP() << "one core: no worker to take the other frame";
    for (int round = 0; round < 50; ++round) {
        std::atomic<bool> started[2] = { false, false }, waiting[2] = { false, false };
        std::atomic<std::thread::id> waiting_thread[2];
        std::atomic<bool> ran_inside{ false };
        run_tasks(2, [&](size_t frame) {
            const size_t other = 1 - frame;
            if (waiting[other] &&
                waiting_thread[other].load() == std::this_thread::get_id())
                ran_inside = true;
            started[frame] = true;
            waiting_thread[frame] = std::this_thread::get_id();
            waiting[frame] = true;
            run_tasks(2, [&](size_t) {
                const auto give_up =
                    std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (!started[other] && std::chrono::steady_clock::now() < give_up)
                    std::this_thread::yield();
            });
            waiting[frame] = false;
        });
        ASSERT_TRUE(started[0] && started[1]);
        ASSERT_FALSE(ran_inside)
            << "round " << round << ": a frame ran inside the other's nested wait";
    }
}

TEST(thread_pool, the_workers_time_is_not_counted_as_another_callers)
{
    // Workers busy with a caller's tasks (splitting them further, so they ask
    // parallel_width() themselves) while that caller sleeps: another caller
    // still sees every core (the workers' time is the sleeping caller's work,
    // which is not busy). Counted as callers, the workers left it one.
    const size_t cores = mimo_gpu::detail::worker_count();
    if (cores < 2)
        GTEST_SKIP() << "one core: no workers";
    const auto main_thread = std::this_thread::get_id();
    std::atomic<bool> done{ false };
    std::atomic<size_t> fewest{ 1000 };
    std::thread observer([&] {
        mimo_gpu::detail::parallel_width(); // a caller from here on
        std::this_thread::sleep_for(std::chrono::milliseconds(120));
        while (!done) {
            size_t w = mimo_gpu::detail::parallel_width();
            size_t seen = fewest.load();
            while (w < seen && !fewest.compare_exchange_weak(seen, w)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    run_tasks(cores, [&](size_t) {
        const auto end =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        if (std::this_thread::get_id() == main_thread) {
            std::this_thread::sleep_until(end); // the caller waits, idle
            return;
        }
        while (std::chrono::steady_clock::now() < end)
            mimo_gpu::detail::parallel_width(); // a worker splitting its task
    });
    done = true;
    observer.join();
    EXPECT_EQ(fewest.load(), cores);
}

TEST(thread_pool, a_batch_splits_among_the_cores_others_leave)
{
    using mimo_gpu::detail::share_of_cores;
    EXPECT_EQ(share_of_cores(2, 0), 2u);
    EXPECT_EQ(share_of_cores(2, -50), 2u); // a measurement below zero counts as 0
    EXPECT_EQ(share_of_cores(2, 700), 2u); // 1.3 cores free
    EXPECT_EQ(share_of_cores(2, 701), 1u);
    EXPECT_EQ(share_of_cores(2, 1500), 1u); // three busy blocks on a laptop
    EXPECT_EQ(share_of_cores(2, 5000), 1u);
    EXPECT_EQ(share_of_cores(1, 0), 1u);
    EXPECT_EQ(share_of_cores(16, 0), 16u);
    EXPECT_EQ(share_of_cores(16, 2400), 14u); // 13.6 free
    EXPECT_EQ(share_of_cores(16, 14800), 1u);
    EXPECT_EQ(share_of_cores(16, 14000), 2u);
}

TEST(thread_pool, ended_threads_give_their_slots_back)
{
    // More threads over a process's life than slots (a flowgraph restarted
    // many times): each new one must still be measured.
    using mimo_gpu::detail::measures_this_thread;
    for (int i = 0; i < 600; ++i) {
        bool measured = false;
        std::thread([&] { measured = measures_this_thread(); }).join();
        ASSERT_TRUE(measured) << "thread " << i;
    }
}

TEST(thread_pool, busy_threads_share_the_cores_and_idle_ones_do_not_count)
{
    // Live, on this machine's clocks: a thread alone gets every core; threads
    // that call but wait leave them; once busy threads stop, every core again.
    using mimo_gpu::detail::parallel_width;
    using namespace std::chrono_literals;
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    auto callers = [&](size_t count, bool spin, auto&& check) {
        std::atomic<bool> stop{ false };
        std::vector<std::thread> threads;
        for (size_t i = 0; i < count; ++i)
            threads.emplace_back([&] {
                auto last = std::chrono::steady_clock::now();
                while (!stop) {
                    if (!spin)
                        std::this_thread::sleep_for(1ms);
                    else if (std::chrono::steady_clock::now() - last < 1ms)
                        continue;
                    parallel_width();
                    last = std::chrono::steady_clock::now();
                }
            });
        std::this_thread::sleep_for(60ms); // several of the 10 ms measurements
        check();
        stop = true;
        for (auto& t : threads)
            t.join();
    };
    std::this_thread::sleep_for(150ms); // the earlier tests' threads fall quiet
    EXPECT_EQ(parallel_width(), cores) << "a thread alone gets every core";
    callers(2, false, [&] {
        parallel_width();
        std::this_thread::sleep_for(30ms);
        EXPECT_EQ(parallel_width(), cores) << "two threads that call but wait";
    });
    // Busy threads lower the width, but by how much depends on what else runs
    // (ctest -j, CPU limits): share_of_cores' table above pins the rule, and
    // here they only run (the measurement's path) before the others fall quiet.
    callers(cores, true, [&] { EXPECT_GE(parallel_width(), 1u); });
    std::this_thread::sleep_for(150ms);
    EXPECT_EQ(parallel_width(), cores) << "the others quiet again";
}
