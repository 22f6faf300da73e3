// How fast a stream's samples come, against the air rate: a receiver that
// works in batches of frames waits for a batch only where the samples come
// well ahead of the air (a recording replayed, a receiver catching up), so a
// stream at the air rate (a radio) pays no latency for it.
#pragma once

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
        m_speed = double(m_since_mark) / (elapsed * m_sample_rate);
        m_mark = now;
        m_since_mark = 0;
    }

    /// The samples' rate over the last whole span, in multiples of the air
    /// rate; 0 until a span has passed since the first samples.
    double speed() const { return m_speed; }

private:
    double m_sample_rate;
    bool m_started = false;
    clock::time_point m_mark;
    uint64_t m_since_mark = 0;
    double m_speed = 0;
};

} // namespace detail
} // namespace mimo_gpu
