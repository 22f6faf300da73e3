/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_WORK_TRACE_H
#define INCLUDED_MIMO_GPU_WORK_TRACE_H

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace gr {
namespace mimo_gpu {

/// When MIMO_GPU_WORK_TRACE names a file, GPU blocks append one line per work()
/// call to it: block name, start and end in microseconds of a steady clock, and
/// the items produced; for timelines of a flowgraph (which blocks run at once).
/// Off (no cost but a branch) otherwise.
class work_trace
{
public:
    explicit work_trace(const char* block) : m_block(block) {}
    void begin()
    {
        if (file())
            m_start = std::chrono::steady_clock::now();
    }
    void end(long produced)
    {
        FILE* f = file();
        if (!f)
            return;
        const auto now = std::chrono::steady_clock::now();
        std::lock_guard<std::mutex> lock(mutex());
        std::fprintf(f,
                     "%s,%lld,%lld,%ld\n",
                     m_block,
                     (long long)std::chrono::duration_cast<std::chrono::microseconds>(
                         m_start.time_since_epoch())
                         .count(),
                     (long long)std::chrono::duration_cast<std::chrono::microseconds>(
                         now.time_since_epoch())
                         .count(),
                     produced);
    }

private:
    static FILE* file()
    {
        static FILE* f = [] {
            const char* path = std::getenv("MIMO_GPU_WORK_TRACE");
            return path && *path ? std::fopen(path, "w") : nullptr;
        }();
        return f;
    }
    static std::mutex& mutex()
    {
        static std::mutex m;
        return m;
    }
    const char* m_block;
    std::chrono::steady_clock::time_point m_start;
};

} // namespace mimo_gpu
} // namespace gr

#endif
