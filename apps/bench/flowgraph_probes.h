// Blocks that time a flowgraph for mimo_gpu_flowgraph_bench: a head that stamps
// when items leave it, and a null sink that stamps when they arrive, so the
// latency from source to sink is measured on the same items.
#pragma once

#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace mimo_gpu_apps {

using probe_clock = std::chrono::steady_clock;

/// Times at which items 0, every, 2*every, ... passed a block.
class item_stamps
{
public:
    explicit item_stamps(uint64_t every) : m_every(every) {}
    /// Items [first, first + count) pass now.
    void pass(uint64_t first, uint64_t count)
    {
        const auto now = probe_clock::now();
        while (m_stamps.size() * m_every < first + count)
            m_stamps.push_back(now);
    }
    const std::vector<probe_clock::time_point>& stamps() const { return m_stamps; }

private:
    uint64_t m_every;
    std::vector<probe_clock::time_point> m_stamps;
};

/// gr::blocks::head (copies up to `limit` items, then ends) that stamps items.
class stamped_head : public gr::sync_block
{
public:
    stamped_head(size_t item_size, uint64_t limit, uint64_t every)
        : gr::sync_block("stamped_head",
                         gr::io_signature::make(1, 1, item_size),
                         gr::io_signature::make(1, 1, item_size)),
          m_item_size(item_size),
          m_limit(limit),
          m_stamps(every)
    {
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star& out) override
    {
        const uint64_t done = nitems_written(0);
        if (done >= m_limit)
            return WORK_DONE;
        const int count = int(std::min<uint64_t>(uint64_t(n), m_limit - done));
        std::memcpy(out[0], in[0], size_t(count) * m_item_size);
        m_stamps.pass(done, uint64_t(count));
        return count;
    }
    const item_stamps& stamps() const { return m_stamps; }

private:
    size_t m_item_size;
    uint64_t m_limit;
    item_stamps m_stamps;
};

/// A null sink that stamps items as they arrive.
class stamped_sink : public gr::sync_block
{
public:
    stamped_sink(size_t item_size, uint64_t every)
        : gr::sync_block("stamped_sink",
                         gr::io_signature::make(1, 1, item_size),
                         gr::io_signature::make(0, 0, 0)),
          m_stamps(every)
    {
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        m_stamps.pass(nitems_read(0), uint64_t(n));
        return n;
    }
    const item_stamps& stamps() const { return m_stamps; }

private:
    item_stamps m_stamps;
};

/// Median over the items stamped at both ends of (arrival - departure), in ms,
/// leaving out the first tenth (start-up).
inline double median_latency_ms(const item_stamps& from, const item_stamps& to)
{
    const size_t n = std::min(from.stamps().size(), to.stamps().size());
    std::vector<double> ms;
    for (size_t k = n / 10; k < n; ++k)
        ms.push_back(
            std::chrono::duration<double, std::milli>(to.stamps()[k] - from.stamps()[k])
                .count());
    if (ms.empty())
        return 0;
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
}

} // namespace mimo_gpu_apps
