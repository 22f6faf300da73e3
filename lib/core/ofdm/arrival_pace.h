// How fast a stream's samples come, against the air rate: a receiver that
// works in batches of frames waits for a batch only where the samples come
// well ahead of the air (a recording replayed), so a stream at the air rate
// (a radio) pays no latency for it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace mimo_gpu {
namespace detail {

class arrival_pace
{
public:
    using clock = std::chrono::steady_clock;
    /// Spans shorter than this tell nothing: a radio's packets come in bursts.
    static constexpr std::chrono::microseconds k_span{ 2000 };

    explicit arrival_pace(double sample_rate) : m_sample_rate(sample_rate) {}

    /// `samples` more samples arrived at `now`.
    void note(uint64_t samples, clock::time_point now = clock::now())
    {
        if (!m_started) { // the first samples' own arrival time is unknown
            m_started = true;
            m_mark = now;
            return;
        }
        m_since_mark += samples;
        const double elapsed = std::chrono::duration<double>(now - m_mark).count();
        if (elapsed < std::chrono::duration<double>(k_span).count())
            return;
        m_before_last = m_last;
        m_last = double(m_since_mark) / (elapsed * m_sample_rate);
        m_mark = now;
        m_since_mark = 0;
    }

    /// The samples' rate, in multiples of the air rate: the slower of the last
    /// two whole spans, so that a backlog drained after a stall (a span that
    /// closes inside the burst reads fast, the next slow) does not make a
    /// stream at the air rate look fast; 0 until two spans have passed.
    double speed() const { return std::min(m_last, m_before_last); }

private:
    double m_sample_rate;
    bool m_started = false;
    clock::time_point m_mark;
    uint64_t m_since_mark = 0;
    double m_last = 0, m_before_last = 0;
};

} // namespace detail
} // namespace mimo_gpu
