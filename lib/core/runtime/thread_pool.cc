#include "thread_pool.h"

#include <condition_variable>
#include <pthread.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <deque>
#include <exception>
#include <iterator>
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

/// Set on the pool's own threads: their time is the callers' work, not a
/// caller's (parallel_width() below).
thread_local bool t_pool_worker = false;

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
        // The caller runs its own group's tasks while it waits, and no one
        // else's: a task of another group (the outer batch a nested call runs
        // inside, another block's batch) can take far longer than this group,
        // whose caller would then wait on it. Taking the outer batch's next
        // task inside the first one's nested call ran a batch of frames on one
        // thread while the workers idled.
        std::unique_lock<std::mutex> lock(m_mutex);
        while (group.remaining > 0) {
            // From the back: its own tasks were queued last, unless nested
            // calls queued theirs since (a scan from the front passed every
            // other caller's tasks first, under the one lock).
            const auto own =
                std::find_if(m_queue.rbegin(), m_queue.rend(), [&](const queued_task& t) {
                    return t.group == &group;
                });
            if (own != m_queue.rend()) {
                execute(lock, std::next(own).base());
                continue;
            }
            // Its tasks were all taken (they are queued once, together): the
            // last to finish notifies.
            m_done.wait(lock, [&] { return group.remaining == 0; });
        }
        if (group.error)
            std::rethrow_exception(group.error);
    }

private:
    void work()
    {
        t_pool_worker = true;
        std::unique_lock<std::mutex> lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_queue.empty())
                return;
            execute(lock, m_queue.begin());
        }
    }
    /// Takes the queued task `at` off the queue and runs it unlocked.
    void execute(std::unique_lock<std::mutex>& lock, std::deque<queued_task>::iterator at)
    {
        const queued_task t = *at;
        m_queue.erase(at);
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

/// The threads that call parallel_width(): each live one has a slot (beyond
/// k_caller_slots live threads, the rest are left out) with its CPU-time clock
/// and how busy it was lately.
constexpr size_t k_caller_slots = 256;
constexpr int64_t k_sample_ns = 10'000'000;  ///< how often the busy shares are measured
constexpr int64_t k_recent_ns = 100'000'000; ///< a thread quiet longer counts as idle

struct caller_slot {
    std::atomic<bool> claimed{ false };
    std::atomic<clockid_t> clock{};
    std::atomic<int64_t> last_asked{ 0 };
    std::atomic<int> busy_permille{ 0 }; ///< CPU time over wall time, last sample
    int64_t cpu_before = -1;             ///< the sampler's own (under g_sampling)
};
caller_slot g_slots[k_caller_slots];
std::atomic<size_t> g_callers{ 0 }; ///< slots ever claimed: [0, g_callers)
std::atomic<int64_t> g_sampled_at{ 0 };
std::atomic<bool> g_sampling{ false };
std::atomic<int> g_busy_total_permille{ 0 };

int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int64_t cpu_ns(clockid_t clock)
{
    timespec t;
    if (clock_gettime(clock, &t) != 0)
        return -1; // the thread has ended
    return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// A calling thread's slot, claimed at its first call and given back when the
/// thread ends (a process that restarts flowgraphs makes new threads).
struct slot_holder {
    size_t index = k_caller_slots; ///< none: more live callers than slots
    slot_holder()
    {
        clockid_t clock;
        if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
            return; // unmeasurable: the thread is left out
        for (size_t i = 0; i < k_caller_slots; ++i) {
            bool free_slot = false;
            if (!g_slots[i].claimed.compare_exchange_strong(free_slot, true))
                continue;
            g_slots[i].clock.store(clock);
            index = i;
            size_t used = g_callers.load();
            while (used < i + 1 && !g_callers.compare_exchange_weak(used, i + 1)) {
            }
            return;
        }
    }
    ~slot_holder()
    {
        if (index == k_caller_slots)
            return;
        g_slots[index].last_asked.store(0, std::memory_order_release);
        g_slots[index].busy_permille.store(0);
        g_slots[index].claimed.store(false);
    }
};

size_t my_slot()
{
    thread_local const slot_holder holder;
    return holder.index;
}

/// Every k_sample_ns, one caller measures how busy each recent caller thread
/// was since the last measurement (CPU time over wall time).
void sample_busy_shares(int64_t now)
{
    if (now - g_sampled_at.load(std::memory_order_relaxed) < k_sample_ns ||
        g_sampling.exchange(true))
        return;
    // Again under the flag: another thread may have sampled since (after this
    // thread's `now`), and the shares divide by the time since.
    const int64_t last = g_sampled_at.load(std::memory_order_relaxed);
    if (now - last < k_sample_ns) {
        g_sampling.store(false);
        return;
    }
    const size_t used = std::min(g_callers.load(), k_caller_slots);
    int total = 0;
    for (size_t i = 0; i < used; ++i) {
        caller_slot& c = g_slots[i];
        // The clock is read only once the slot's thread has asked (it stores
        // its clock before its first time, released by that store).
        const int64_t asked = c.last_asked.load(std::memory_order_acquire);
        int permille = 0;
        if (asked != 0 && now - asked < k_recent_ns) {
            const int64_t cpu = cpu_ns(c.clock.load());
            if (cpu >= 0 && c.cpu_before >= 0 && last > 0)
                permille = int(std::clamp<int64_t>(
                    (cpu - c.cpu_before) * 1000 / (now - last), 0, 1000));
            c.cpu_before = cpu;
        } else {
            c.cpu_before = -1;
        }
        c.busy_permille.store(permille, std::memory_order_relaxed);
        total += permille;
    }
    g_busy_total_permille.store(total, std::memory_order_relaxed);
    g_sampled_at.store(now, std::memory_order_relaxed);
    g_sampling.store(false);
}

} // namespace

size_t parallel_width()
{
    static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    if (cores == 1)
        return 1;
    const int64_t now = now_ns();
    // A pool thread splitting a task further: the callers' threads are the
    // others. It takes no slot of its own: the workers run the callers' tasks,
    // so their time counted as another caller's would count the work twice
    // (each block's batches saw the cores the workers spent on its own tasks
    // as taken, and a receiver on 16 cores split a batch in two).
    // So is a thread left out (more live callers than slots).
    const size_t slot = t_pool_worker ? k_caller_slots : my_slot();
    if (slot == k_caller_slots) { // every caller measured is another
        sample_busy_shares(now);
        return share_of_cores(cores,
                              g_busy_total_permille.load(std::memory_order_relaxed));
    }
    g_slots[slot].last_asked.store(now, std::memory_order_release);
    sample_busy_shares(now);
    return share_of_cores(
        cores,
        g_busy_total_permille.load(std::memory_order_relaxed) -
            g_slots[slot].busy_permille.load(std::memory_order_relaxed));
}

bool measures_this_thread() { return my_slot() != k_caller_slots; }

size_t share_of_cores(size_t cores, int others_busy_permille)
{
    const int free_permille = int(cores) * 1000 - std::max(0, others_busy_permille);
    // A second part pays once about a third of a core is left beside this one.
    if (free_permille < 1300)
        return 1;
    return std::max<size_t>(2, size_t((free_permille + 500) / 1000));
}

} // namespace detail
} // namespace mimo_gpu
