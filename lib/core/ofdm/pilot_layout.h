// Where a slot's pilot symbols sit (ofdm_grid::pilot_positions), written once
// for the host and the CUDA kernels: the frame symbol of each pilot and data
// symbol, their times, and which pilot symbols a data symbol's channel is
// interpolated from. A slot is L = P + D symbols, P of them pilot symbols at
// `position[0..P-1]` (ascending), the data symbols in the others, in order.
// Pilot symbol q = j P + p is slot j's p-th; the preamble is frame symbol 0.
#pragma once

#include "../runtime/host_device.h"

#include <mimo_gpu/ofdm_grid.h>

namespace mimo_gpu {
namespace detail {

struct slot_layout {
    int P = 1;     ///< pilot symbols per slot
    int L = 1;     ///< symbols per slot, P + D
    int slots = 1; ///< slots per frame
    int position[k_max_pilot_symbols_per_slot] = { 0 };

    /// Pilot symbols per frame.
    MIMO_HD int pilots() const { return slots * P; }
    /// Time of pilot symbol q in symbols from the first slot's start.
    MIMO_HD int pilot_time(int q) const { return q / P * L + position[q % P]; }
    /// Time of data symbol s (0..D-1) of slot j: the s-th position that holds
    /// no pilot (each pilot at or before it pushes it one on).
    MIMO_HD int data_time(int j, int s) const
    {
        int x = s;
        for (int p = 0; p < P; ++p)
            if (position[p] <= x)
                ++x;
        return j * L + x;
    }
    MIMO_HD int pilot_symbol(int q) const { return 1 + pilot_time(q); }
    MIMO_HD int data_symbol(int j, int s) const { return 1 + data_time(j, s); }
    /// The last pilot symbol before `time` (-1: none).
    MIMO_HD int pilot_before(int time) const
    {
        const int j = time / L, within = time % L;
        int before = 0;
        while (before < P && position[before] < within)
            ++before;
        return j * P + before - 1;
    }

    /// What slot position k holds: data symbol s (>= 0) or pilot symbol p
    /// (as -1 - p).
    MIMO_HD int role(int k) const
    {
        int p = 0;
        while (p < P && position[p] < k)
            ++p;
        return p < P && position[p] == k ? -1 - p : k - p;
    }

    /// The gap from pilot symbol q to the next: within a slot, or across into
    /// the next slot (g = P - 1).
    MIMO_HD int gap(int p) const
    {
        return p + 1 < P ? position[p + 1] - position[p]
                         : L - position[P - 1] + position[0];
    }
    /// How often a gap of `lag` symbols occurs between consecutive pilot symbols.
    MIMO_HD int pairs_at(int lag) const
    {
        int n = 0;
        for (int p = 0; p < P; ++p)
            if (gap(p) == lag)
                n += p + 1 < P ? slots : slots - 1;
        return n;
    }
    /// The time filter's Doppler is measured from consecutive pilot symbols
    /// (q, q + 1) doppler_lag() symbols apart: the gap that occurs most often
    /// in the frame (the most pairs), the longer on a tie (the correlation then
    /// falls further from 1 than the noise correction's error; too long a lag
    /// would pass J0's first zero, but no gap is longer than a slot). None in
    /// a frame of one pilot symbol.
    MIMO_HD int doppler_lag() const
    {
        int lag = L, most = 0;
        for (int p = 0; p < P; ++p) {
            const int n = pairs_at(gap(p));
            if (n > most || (n == most && gap(p) > lag)) {
                most = n;
                lag = gap(p);
            }
        }
        return lag;
    }
    MIMO_HD bool doppler_pair(int q) const
    {
        return q + 1 < pilots() && pilot_time(q + 1) - pilot_time(q) == doppler_lag();
    }
    MIMO_HD int doppler_pairs() const { return pairs_at(doppler_lag()); }
};

/// The layout of a grid; validates it first (std::invalid_argument).
inline slot_layout layout_of(const ofdm_grid& g)
{
    g.validate();
    slot_layout l;
    l.P = int(g.pilot_positions.size());
    l.L = l.P + g.data_symbols;
    l.slots = g.slots;
    for (int p = 0; p < l.P; ++p)
        l.position[p] = g.pilot_positions[size_t(p)];
    return l;
}

/// Linear interpolation in time for the data symbol at `time`: its channel is
/// (1 - a) H[first] + a H[second], between the pilot symbols around it, the
/// nearest one held before the frame's first pilot symbol and after its last.
struct time_pair {
    int first, second;
    float a;
};

MIMO_HD time_pair linear_time_pair(const slot_layout& l, int time)
{
    const int before = l.pilot_before(time), last = l.pilots() - 1;
    if (before < 0)
        return { 0, 0, 0.0f };
    if (before >= last)
        return { last, last, 0.0f };
    const int t0 = l.pilot_time(before), t1 = l.pilot_time(before + 1);
    return { before, before + 1, float(time - t0) / float(t1 - t0) };
}

} // namespace detail
} // namespace mimo_gpu
