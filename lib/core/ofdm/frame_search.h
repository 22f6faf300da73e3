// Frame synchronisation as one rule for the CPU and the GPU, over a stream.
//
// 1. The Schmidl-Cox metric M(d) = |P(d)|^2 / R(d)^2, summed over the receive
//    antennas, at every position d whose N-sample window lies in the samples
//    (non-finite samples count as zero: they cannot hide a later preamble).
// 2. Runs: maximal stretches of positions with M above the threshold. A
//    preamble makes one run (its plateau and the ramps around it).
// 3. Each run is decided alone, from its own positions: the analysis window
//    [s, s + N + CP] from the run's start s; the plateau (M within 90 % of the
//    window's peak), whose middle gives the CFO (arg P / pi subcarrier
//    spacings) and whose end the coarse timing; then the matched filter with
//    the CFO-rotated preamble over [coarse - CP, coarse + CP/2 + 1] and the
//    earliest local maximum within 10 dB of the strongest: the first path.
//    The FFT window starts `backoff` samples before it.
// 4. The walk takes the runs in order: a run that ends before the search
//    position `from`, or whose frame would start before it (it overlaps the
//    frame before), is skipped; a complete frame is taken and the search goes
//    on from the frame's end (frame_start + frame - CP); an incomplete frame, or
//    a run whose decision needs samples that have not come yet, stops the walk.
//
// A decision depends on the run alone, never on where the search started, so
// it is the same however a stream is cut into calls, and the GPU decides runs
// in parallel (lib/core/ofdm/cuda_front_end.cu) while the CPU decides them as
// the walk reaches them (frame_search.cc); both walk with walk_runs() below.
#pragma once

#include "../runtime/host_device.h"

#include <mimo_gpu/ofdm_grid.h>
#include <mimo_gpu/ofdm_receiver.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace mimo_gpu {
namespace detail {

constexpr float k_plateau_fraction =
    0.9f; ///< the plateau: M within 90 % of the window's peak
/// The metric's running sums restart exactly at stream positions that are
/// multiples of this on the CPU (frame_search.cc) and of a divisor of it on the
/// GPU (cuda_front_end.cu's tiles of 1024, which must divide it), so a
/// position's metric does not depend on where a search began (the two backends
/// agree to rounding, not to the bit); a stream's window keeps samples from
/// such a position on.
constexpr size_t k_metric_alignment = 4096;

inline size_t align_down(size_t n, size_t alignment) { return n / alignment * alignment; }
constexpr float k_path_fraction = 0.1f; ///< a path: within 10 dB of the strongest

/// The grid's and configuration's numbers the rule uses.
struct sync_rule {
    int N = 0, CP = 0, backoff = 0, nr = 0;
    float threshold = 0;
    size_t frame_samples = 0; ///< samples of a frame, preamble CP included
    /// samples from a frame's FFT window start to the end of its last FFT window
    size_t reach = 0;

    sync_rule(const ofdm_grid& g, const ofdm_receiver_config& c, int backoff);
    /// Positions before the search position that are searched too, so that a run
    /// the search position falls into is found from its start.
    size_t lookback() const { return size_t(N + CP); }
    /// Samples before this are not needed by the next search: its look-back
    /// before where the walk stopped keeping (and never before search_begin's).
    size_t keep_from(size_t search_begin, size_t keep) const
    {
        const size_t k = std::max(search_begin, keep);
        return k >= lookback() ? k - lookback() : 0;
    }
    /// Matched-filter positions of one run at most.
    int max_span() const { return CP + CP / 2 + 2; }
    /// Samples (from position 0) a run starting at s needs for its decision: the
    /// analysis window's positions and the matched filter's, each with its N samples.
    size_t samples_to_decide(size_t s) const
    {
        return s + size_t(N + CP + CP / 2 + 2) + size_t(N);
    }
    /// Where the search goes on after a frame found at frame_start.
    size_t after(size_t frame_start) const
    {
        return frame_start + frame_samples - size_t(CP);
    }
};

/// The analysis window's verdict for a run starting at s (positions absolute):
/// from the plateau's first and last positions p0 <= p1 (offsets from s) and
/// arg P at its middle.
struct plateau_verdict {
    size_t mid = 0, coarse = 0, lo = 0, hi = 0; ///< matched filter over [lo, hi]
};

/// lowest: the first position searched (lo never goes below it); last: the last
/// position whose N-sample window lies in the samples.
MIMO_HD plateau_verdict
plateau_of(size_t s, size_t p0, size_t p1, int CP, size_t lowest, size_t last)
{
    plateau_verdict v;
    v.mid = s + (p0 + p1) / 2;
    v.coarse = s + p1;
    v.lo = v.coarse >= size_t(CP) + lowest ? v.coarse - size_t(CP) : lowest;
    const size_t hi = v.coarse + size_t(CP / 2 + 1);
    v.hi = hi < last ? hi : last;
    return v;
}

/// The FFT window's start for a first path at absolute position `path`.
MIMO_HD size_t frame_start_of(size_t path, int backoff)
{
    return path >= size_t(backoff) ? path - size_t(backoff) : 0;
}

/// A run of positions above the threshold, [start, last], and its decision.
struct run_decision {
    size_t start = 0, last = 0;
    bool decided = false;
    /// Not looked at: the list of runs was cut here (the GPU search decides a
    /// batch of runs at a time and marks where the next one starts). The walk
    /// stops before it and the next search goes on from its position.
    bool beyond = false;
    sync_result sync; ///< found, frame_start, cfo, metric (complete: set by the walk)
};

struct walk_result {
    std::vector<sync_result> frames; ///< complete frames, in order (at most max_frames)
    /// The first frame not taken because the samples end inside it (found,
    /// not complete), or !found.
    sync_result cut;
    size_t next_from = 0; ///< frames start at or after it
    /// Samples before it are not needed by the next search (it may lie after
    /// next_from when the walk stopped at a run after it).
    size_t keep_from = 0;
    bool more = false; ///< stopped at max_frames: more frames may be there
    /// Stopped for samples not yet there: the walk cannot go on before the
    /// samples reach this count (a cut frame's end, or what a run's decision
    /// needs); 0 otherwise.
    size_t needs = 0;
};

/// The walk (step 4). runs: in order; decide(k) decides run k if it can (its
/// samples are there, or the stream has ended and it decides on what there is)
/// and says whether it did. samples: the samples there are; search_begin: the
/// first position searched; positions_end: one past the last position searched.
walk_result walk_runs(std::vector<run_decision>& runs,
                      const std::function<bool(size_t)>& decide,
                      const sync_rule& rule,
                      size_t samples,
                      size_t search_begin,
                      size_t positions_end,
                      size_t from,
                      size_t max_frames);

/// The CPU's search over antenna-interleaved host samples.
class frame_search
{
public:
    frame_search(const ofdm_grid& grid, const ofdm_receiver_config& config, int backoff);
    const sync_rule& rule() const { return m_rule; }
    /// The preamble's N time samples, all antennas together.
    const std::vector<cfloat>& preamble() const { return m_preamble; }

    /// Frames in rx (samples * nr, antenna-interleaved) from `from` on, searching
    /// positions from search_begin (<= from; runs the search position falls into
    /// are found from their start). ended: no more samples will come (runs are
    /// decided on the samples there are). rx[0] is stream sample `origin`, and
    /// the samples from align_down(origin + search_begin, k_metric_alignment)
    /// must be in rx.
    /// remembered (a stream's searches, stream positions): decisions of earlier
    /// calls, taken as they are, and this call's left there for the next. A
    /// run's decision depends on its start and the samples alone, so a run whose
    /// frame the samples cut is not decided again when the rest arrives (the
    /// matched filter is most of a decision's cost). Only runs that start at
    /// least a cyclic prefix after search_begin are remembered: the matched
    /// filter of one nearer may have been clipped by it.
    walk_result find(const cfloat* rx,
                     size_t samples,
                     size_t search_begin,
                     size_t from,
                     size_t max_frames,
                     bool ended,
                     uint64_t origin = 0,
                     std::vector<run_decision>* remembered = nullptr) const;

    /// The metric of positions [first, first + count) (step 1), into M and P;
    /// `first` lies on a multiple of k_metric_alignment (counted from the stream's
    /// start).
    void metric(const cfloat* rx, size_t first, size_t count, float* M, cfloat* P) const;
    /// The matched filter's output over [lo, hi] for the preamble rotated by cfo.
    std::vector<float>
    matched_filter(const cfloat* rx, size_t lo, size_t hi, float cfo) const;

private:
    sync_rule m_rule;
    std::vector<cfloat> m_preamble;
};

/// The metric's per-sample terms of samples [begin, end) of x (nr antennas a
/// sample, interleaved; a sample with a non-finite part counts as zero), in
/// double: e[m] = sum_r |x_r[m]|^2 and, for m < terms, cr[m] + i ci[m] = sum_r
/// conj(x_r[m]) x_r[m + L]. Four samples at a time in AVX2 where the processor
/// has it (the same operations in the same order: identical to the bit), unless
/// scalar_only.
void metric_sample_terms(const cfloat* x,
                         int nr,
                         int L,
                         size_t begin,
                         size_t end,
                         size_t terms,
                         double* cr,
                         double* ci,
                         double* e,
                         bool scalar_only = false);

/// The preamble's time samples (N, unitary IFFT of the grid's preamble bins).
std::vector<cfloat> preamble_time_signal(const ofdm_grid& grid);

} // namespace detail
} // namespace mimo_gpu
