#include "thread_pool.h"

#include <condition_variable>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

/// One run_tasks call: its tasks, how many are left, its first error.
struct task_group {
    const std::function<void(size_t)>* task;
    size_t remaining;
    std::exception_ptr error;
};

struct queued_task {
    task_group* group;
    size_t index;
};

class thread_pool
{
public:
    thread_pool()
    {
        const size_t cores = std::max(1u, std::thread::hardware_concurrency());
        for (size_t i = 1; i < cores; ++i)
            m_threads.emplace_back([this] { work(); });
    }
    ~thread_pool()
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        for (auto& t : m_threads)
            t.join();
    }
    size_t threads() const { return m_threads.size() + 1; }

    void run(size_t tasks, const std::function<void(size_t)>& task)
    {
        task_group group{ &task, tasks, nullptr };
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            for (size_t k = 0; k < tasks; ++k)
                m_queue.push_back({ &group, k });
        }
        m_wake.notify_all();
        std::unique_lock<std::mutex> lock(m_mutex);
        while (group.remaining > 0) {
            if (!m_queue.empty()) {
                execute(lock, m_queue.front());
                continue;
            }
            m_done.wait(lock, [&] { return group.remaining == 0 || !m_queue.empty(); });
        }
        if (group.error)
            std::rethrow_exception(group.error);
    }

private:
    void work()
    {
        std::unique_lock<std::mutex> lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_queue.empty())
                return;
            execute(lock, m_queue.front());
        }
    }
    /// Pops `t` (the queue's front) and runs it unlocked.
    void execute(std::unique_lock<std::mutex>& lock, queued_task t)
    {
        m_queue.pop_front();
        lock.unlock();
        std::exception_ptr error;
        try {
            (*t.group->task)(t.index);
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        if (error && !t.group->error)
            t.group->error = error;
        if (--t.group->remaining == 0)
            m_done.notify_all();
    }

    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::deque<queued_task> m_queue;
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

thread_pool& pool()
{
    static thread_pool instance;
    return instance;
}

} // namespace

void run_tasks(size_t tasks, const std::function<void(size_t)>& task)
{
    if (tasks == 1) {
        task(0);
        return;
    }
    pool().run(tasks, task);
}

size_t worker_count() { return pool().threads(); }

namespace {

/// The threads that asked parallel_width() lately: each has a slot (threads
/// beyond the slots share them) holding the time it last asked.
constexpr size_t k_caller_slots = 256;
constexpr int64_t k_recent_ns = 50'000'000;
std::atomic<int64_t> g_last_asked[k_caller_slots];
std::atomic<size_t> g_callers{ 0 };

int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace

size_t parallel_width()
{
    static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    if (cores == 1)
        return 1;
    thread_local const size_t slot = g_callers.fetch_add(1) % k_caller_slots;
    const int64_t now = now_ns();
    g_last_asked[slot].store(now, std::memory_order_relaxed);
    const size_t used =
        std::min(g_callers.load(std::memory_order_relaxed), k_caller_slots);
    size_t others = 0;
    for (size_t i = 0; i < used; ++i)
        if (i != slot &&
            now - g_last_asked[i].load(std::memory_order_relaxed) < k_recent_ns)
            ++others;
    return others + 1 >= cores ? 1 : cores - others;
}

} // namespace detail
} // namespace mimo_gpu
