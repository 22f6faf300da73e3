// Estimation across frames (time_filter.h): which frame each new frame of a
// stream follows closely enough to be linked to, for the CPU receiver and the
// CUDA front end alike. Each keeps the last frame's pilot symbols' estimates
// itself (host or device memory); this keeps where that frame lay.
#pragma once

#include <mimo_gpu/ofdm_grid.h>

#include <cstdint>
#include <vector>

namespace mimo_gpu {
namespace detail {

class frame_history
{
public:
    frame_history(const ofdm_grid& g, bool enabled)
        : m_enabled(enabled),
          m_reach(2 * uint64_t(g.frame_samples())),
          m_symbol_samples(g.symbol_samples())
    {
    }

    /// Per frame of a call (positions: each one's start in the stream, in
    /// samples; null: unknown), the gap in symbols from the frame before it
    /// (the one before in the call, or the last of the call before) where it
    /// starts after it and within two frames' length; -1: not linked.
    std::vector<float> gaps(const uint64_t* positions, size_t frames) const
    {
        std::vector<float> gap(frames, -1.0f);
        for (size_t k = 0; m_enabled && positions && k < frames; ++k) {
            if (k == 0 && !m_have_last)
                continue;
            const uint64_t before = k ? positions[k - 1] : m_last;
            if (positions[k] > before && positions[k] - before <= m_reach)
                gap[k] = float(double(positions[k] - before) / m_symbol_samples);
        }
        return gap;
    }
    /// After a call of `frames` frames: the last one is what the next call's
    /// first may follow (not where the positions were unknown); a call of none
    /// changes nothing (a stream's calls that found no frame).
    void received(const uint64_t* positions, size_t frames)
    {
        if (frames == 0)
            return;
        m_have_last = m_enabled && positions;
        if (m_have_last)
            m_last = positions[frames - 1];
    }
    bool has_last() const { return m_have_last; }

private:
    bool m_enabled;
    uint64_t m_reach;
    double m_symbol_samples;
    uint64_t m_last = 0;
    bool m_have_last = false;
};

} // namespace detail
} // namespace mimo_gpu
