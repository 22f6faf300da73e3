// frame_search (CPU) and the walk over decided runs that the GPU search shares.
#include "frame_search.h"

#include "fftw_plan.h"
#include "../runtime/parallel_for.h"

#include <volk/volk.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

namespace {

/// Positions per tile of the metric: summed exactly at a tile's first position,
/// then slid one position at a time (double), so no drift over long buffers.
constexpr size_t k_metric_tile = k_metric_alignment;

inline std::complex<double> finite_sample(const cfloat* rx, size_t n, int nr, int r)
{
    const cfloat v = rx[n * size_t(nr) + size_t(r)];
    return std::isfinite(v.real()) && std::isfinite(v.imag()) ? std::complex<double>(v) : 0.0;
}

} // namespace

sync_rule::sync_rule(const ofdm_grid& g, const ofdm_receiver_config& c, int backoff_samples)
    : N(g.fft_size),
      CP(g.cp_length),
      backoff(backoff_samples),
      nr(c.nr),
      threshold(c.sync_threshold),
      frame_samples(size_t(g.frame_samples())),
      reach(size_t(g.slots) * size_t(1 + g.data_symbols) * size_t(g.symbol_samples()) + size_t(g.fft_size))
{
}

walk_result walk_runs(std::vector<run_decision>& runs,
                      const std::function<bool(size_t)>& decide,
                      const sync_rule& rule,
                      size_t samples,
                      size_t search_begin,
                      size_t positions_end,
                      size_t from,
                      size_t max_frames)
{
    walk_result out;
    size_t keep = from;
    bool stopped = false;
    for (size_t k = 0; k < runs.size() && !stopped; ++k) {
        run_decision& run = runs[k];
        if (run.last < from)
            continue; // ends before the search position
        if (out.frames.size() >= max_frames) {
            out.more = true;
            stopped = true;
            break;
        }
        if (!decide(k)) { // its samples have not all come: wait for them (from its start on)
            keep = run.start;
            out.needs = std::max(samples + 1, rule.samples_to_decide(run.start));
            stopped = true;
            break;
        }
        sync_result s = run.sync;
        if (!s.found || s.frame_start < from)
            continue; // it overlaps the frame before
        s.complete = s.frame_start + rule.reach <= samples;
        if (!s.complete) { // the samples end inside the frame: keep it from its run's start
            out.cut = s;
            keep = run.start;
            out.needs = s.frame_start + rule.reach;
            stopped = true;
            break;
        }
        out.frames.push_back(s);
        from = rule.after(s.frame_start);
        keep = from;
    }
    if (!stopped) { // every run looked at: the next one starts after the positions searched
        from = std::max(from, positions_end);
        keep = from;
    }
    out.next_from = from;
    out.keep_from = std::max(search_begin, keep) >= rule.lookback() ? std::max(search_begin, keep) - rule.lookback()
                                                                    : 0;
    return out;
}

std::vector<cfloat> preamble_time_signal(const ofdm_grid& grid)
{
    const int N = grid.fft_size;
    std::vector<cfloat> bins(size_t(N), cfloat(0, 0));
    std::vector<cfloat> body(static_cast<size_t>(N));
    for (int i = 0; i < grid.used_subcarriers; ++i)
        bins[size_t(grid.bin(i))] = grid.preamble(i);
    fftw_plan_1d ifft(N, fftw_plan_1d::direction::inverse);
    ifft.run(bins.data(), body.data());
    return body;
}

frame_search::frame_search(const ofdm_grid& grid, const ofdm_receiver_config& config, int backoff)
    : m_rule(grid, config, backoff), m_preamble(preamble_time_signal(grid))
{
}

void frame_search::metric(const cfloat* rx, size_t first, size_t count, float* M, cfloat* P) const
{
    const int L = m_rule.N / 2, nr = m_rule.nr;
    const size_t tiles = (count + k_metric_tile - 1) / k_metric_tile;
    parallel_for(tiles, 1, [&](size_t tile_begin, size_t tile_end) {
        for (size_t tile = tile_begin; tile < tile_end; ++tile) {
            const size_t d0 = first + tile * k_metric_tile;
            const size_t d1 = std::min(first + count, d0 + k_metric_tile);
            std::complex<double> p(0, 0);
            double R = 0;
            for (int m = 0; m < L; ++m)
                for (int r = 0; r < nr; ++r) {
                    const auto a = finite_sample(rx, d0 + size_t(m), nr, r);
                    const auto b = finite_sample(rx, d0 + size_t(m + L), nr, r);
                    p += std::conj(a) * b;
                    R += 0.5 * (std::norm(a) + std::norm(b));
                }
            for (size_t d = d0; d < d1; ++d) {
                if (d > d0)
                    for (int r = 0; r < nr; ++r) {
                        const auto a0 = finite_sample(rx, d - 1, nr, r);
                        const auto aL = finite_sample(rx, d - 1 + size_t(L), nr, r);
                        const auto a2 = finite_sample(rx, d - 1 + size_t(2 * L), nr, r);
                        p += std::conj(aL) * a2 - std::conj(a0) * aL;
                        R += 0.5 * (std::norm(a2) - std::norm(a0));
                    }
                M[d - first] = R > 0 ? float(std::norm(p) / (R * R)) : 0.0f;
                P[d - first] = cfloat(p);
            }
        }
    });
}

std::vector<float> frame_search::matched_filter(const cfloat* rx, size_t lo, size_t hi, float cfo) const
{
    const int N = m_rule.N, nr = m_rule.nr;
    std::vector<cfloat> q(static_cast<size_t>(N));
    for (int m = 0; m < N; ++m)
        q[size_t(m)] = m_preamble[size_t(m)] * std::polar(1.0f, float(2 * M_PI * double(cfo) * m / N));
    const size_t span = hi - lo + size_t(N);
    std::vector<cfloat> lanes(size_t(nr) * span);
    for (size_t n = 0; n < span; ++n)
        for (int r = 0; r < nr; ++r)
            lanes[size_t(r) * span + n] = cfloat(finite_sample(rx, lo + n, nr, r));
    std::vector<float> c(hi - lo + 1, 0.0f);
    parallel_for(c.size(), 32, [&](size_t begin, size_t end) {
        for (size_t d = lo + begin; d < lo + end; ++d)
            for (int r = 0; r < nr; ++r) {
                lv_32fc_t dot;
                volk_32fc_x2_conjugate_dot_prod_32fc(&dot, &lanes[size_t(r) * span + (d - lo)], q.data(), unsigned(N));
                c[d - lo] += std::norm(dot);
            }
    });
    return c;
}

walk_result frame_search::find(const cfloat* rx,
                               size_t samples,
                               size_t search_begin,
                               size_t from,
                               size_t max_frames,
                               bool ended,
                               uint64_t origin) const
{
    const sync_rule& g = m_rule;
    std::vector<run_decision> runs;
    if (samples < size_t(g.N) || search_begin > samples - size_t(g.N)) // no whole window to search
        return walk_runs(
            runs, [](size_t) { return false; }, g, samples, search_begin, search_begin, from, max_frames);
    const size_t last = samples - size_t(g.N), count = last + 1 - search_begin;
    // The metric from the tile the search begins in (its sums restart there),
    // the runs from search_begin.
    const size_t tile = size_t(origin + search_begin - align_down(origin + search_begin, k_metric_tile));
    if (tile > search_begin)
        throw std::logic_error("mimo_gpu: frame_search: the samples do not reach back to the metric's tile");
    std::vector<float> tile_M(count + tile);
    std::vector<cfloat> tile_P(count + tile);
    metric(rx, search_begin - tile, count + tile, tile_M.data(), tile_P.data());
    const float* M = tile_M.data() + tile;
    const cfloat* P = tile_P.data() + tile;
    for (size_t k = 0; k < count; ++k) {
        if (!(M[k] > g.threshold))
            continue;
        run_decision run;
        run.start = search_begin + k;
        while (k + 1 < count && M[k + 1] > g.threshold)
            ++k;
        run.last = search_begin + k;
        runs.push_back(run);
    }
    auto at = [&](size_t d) { return d - search_begin; };
    auto decide = [&](size_t k) {
        run_decision& run = runs[k];
        if (run.decided)
            return true;
        const size_t s = run.start;
        if (!ended && g.samples_to_decide(s) > samples)
            return false;
        const size_t window_end = std::min(s + size_t(g.N + g.CP), last);
        float peak = 0;
        for (size_t d = s; d <= window_end; ++d)
            peak = std::max(peak, M[at(d)]);
        size_t p0 = window_end - s + 1, p1 = 0;
        for (size_t d = s; d <= window_end; ++d)
            if (M[at(d)] >= k_plateau_fraction * peak) {
                p0 = std::min(p0, d - s);
                p1 = d - s;
            }
        const plateau_verdict v = plateau_of(s, p0, p1, g.CP, search_begin, last);
        run.sync.found = true;
        run.sync.metric = M[at(v.mid)];
        run.sync.cfo = float(std::arg(std::complex<double>(P[at(v.mid)])) / M_PI);
        const std::vector<float> c = matched_filter(rx, v.lo, v.hi, run.sync.cfo);
        const float cmax = *std::max_element(c.begin(), c.end());
        size_t path = v.lo;
        for (size_t d = v.lo; d <= v.hi; ++d) {
            const float x = c[d - v.lo];
            const bool local_max = (d == v.lo || x >= c[d - v.lo - 1]) && (d == v.hi || x >= c[d - v.lo + 1]);
            if (local_max && x >= k_path_fraction * cmax) {
                path = d;
                break;
            }
        }
        run.sync.frame_start = frame_start_of(path, g.backoff);
        run.decided = true;
        return true;
    };
    return walk_runs(runs, decide, g, samples, search_begin, last + 1, from, max_frames);
}

} // namespace detail
} // namespace mimo_gpu
