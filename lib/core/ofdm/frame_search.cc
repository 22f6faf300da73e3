// frame_search (CPU) and the walk over decided runs that the GPU search shares.
#include "frame_search.h"

#include "../runtime/parallel_for.h"
#include "fftw_plan.h"
#ifdef MIMO_GPU_SEARCH_AVX2
#include "simd/search_terms_avx2.h"
#endif

#include <volk/volk.h>

#include <type_traits>
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
    return std::isfinite(v.real()) && std::isfinite(v.imag()) ? std::complex<double>(v)
                                                              : 0.0;
}

/// The metric's per-sample terms of samples [begin, end) of x (antenna-
/// interleaved, nr a sample; non-finite values as zero): e(m) = sum_r |x_r[m]|^2
/// and, for m < terms, c(m) = sum_r conj(x_r[m]) x_r[m + L], in double (the
/// products of floats are exact there). The antennas' loop is unrolled for the
/// usual counts (NR > 0); metric_sample_terms does four samples at a time in
/// AVX2 where it can and leaves the rest to this loop.
template <int NR>
void sample_terms(const cfloat* x,
                  int nr_runtime,
                  int L,
                  size_t energy_begin,
                  size_t product_begin,
                  size_t end,
                  size_t terms,
                  double* cr,
                  double* ci,
                  double* e)
{
    const int nr = NR > 0 ? NR : nr_runtime;
    const float* f = reinterpret_cast<const float*>(x);
    const size_t lag = size_t(L) * size_t(nr) * 2;
    // A sample counts as zero unless both its parts are finite (v - v is 0).
    auto usable = [](const float* v) {
        return v[0] - v[0] == 0.0f && v[1] - v[1] == 0.0f;
    };
    for (size_t m = energy_begin; m < end; ++m) {
        const float* a = f + m * size_t(nr) * 2;
        double energy = 0;
        for (int r = 0; r < nr; ++r) {
            const bool ok = usable(a + 2 * r);
            const double re = ok ? double(a[2 * r]) : 0.0,
                         im = ok ? double(a[2 * r + 1]) : 0.0;
            energy += re * re + im * im;
        }
        e[m] = energy;
    }
    const size_t stop = std::min(end, terms);
    for (size_t m = product_begin; m < stop; ++m) {
        const float* a = f + m * size_t(nr) * 2;
        const float* b = a + lag;
        double sr = 0, si = 0;
        for (int r = 0; r < nr; ++r) {
            const bool oka = usable(a + 2 * r), okb = usable(b + 2 * r);
            const double ar = oka ? double(a[2 * r]) : 0.0,
                         ai = oka ? double(a[2 * r + 1]) : 0.0;
            const double br = okb ? double(b[2 * r]) : 0.0,
                         bi = okb ? double(b[2 * r + 1]) : 0.0;
            sr += ar * br + ai * bi;
            si += ar * bi - ai * br;
        }
        cr[m] = sr;
        ci[m] = si;
    }
}

} // namespace

void metric_sample_terms(const cfloat* x,
                         int nr,
                         int L,
                         size_t begin,
                         size_t end,
                         size_t terms,
                         double* cr,
                         double* ci,
                         double* e,
                         bool scalar_only)
{
    size_t energy_begin = begin, product_begin = begin;
#ifdef MIMO_GPU_SEARCH_AVX2
    if (cpu_has_avx2() &&
        !scalar_only) { // four samples at a time, the same terms to the bit
        const terms_done done = sample_terms_avx2(x, nr, L, begin, end, terms, cr, ci, e);
        energy_begin = done.energy_end;
        product_begin = done.product_end;
    }
#else
    (void)scalar_only;
#endif
    const auto scalar = [&](auto unrolled) {
        sample_terms<decltype(unrolled)::value>(
            x, nr, L, energy_begin, product_begin, end, terms, cr, ci, e);
    };
    switch (nr) {
    case 1:
        return scalar(std::integral_constant<int, 1>{});
    case 2:
        return scalar(std::integral_constant<int, 2>{});
    case 4:
        return scalar(std::integral_constant<int, 4>{});
    default:
        return scalar(std::integral_constant<int, 0>{});
    }
}

sync_rule::sync_rule(const ofdm_grid& g,
                     const ofdm_receiver_config& c,
                     int backoff_samples)
    : N(g.fft_size),
      CP(g.cp_length),
      backoff(backoff_samples),
      nr(c.nr),
      threshold(c.sync_threshold),
      frame_samples(size_t(g.frame_samples())),
      reach(size_t(g.frame_symbols() - 1) * size_t(g.symbol_samples()) +
            size_t(g.fft_size))
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
        if (run.beyond) { // runs follow that were not listed: search again from here
            out.more = true;
            stopped = true;
            break;
        }
        if (run.last < from)
            continue; // ends before the search position
        if (out.frames.size() >= max_frames) {
            out.more = true;
            stopped = true;
            break;
        }
        if (!decide(
                k)) { // its samples have not all come: wait for them (from its start on)
            keep = run.start;
            out.needs = std::max(samples + 1, rule.samples_to_decide(run.start));
            stopped = true;
            break;
        }
        sync_result s = run.sync;
        if (!s.found || s.frame_start < from)
            continue; // it overlaps the frame before
        s.complete = s.frame_start + rule.reach <= samples;
        if (!s.complete) { // the samples end inside the frame: keep it from its run's
                           // start
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
    if (!stopped) { // every run looked at: the next one starts after the positions
                    // searched
        from = std::max(from, positions_end);
        keep = from;
    }
    out.next_from = from;
    out.keep_from = rule.keep_from(search_begin, keep);
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

frame_search::frame_search(const ofdm_grid& grid,
                           const ofdm_receiver_config& config,
                           int backoff)
    : m_rule(grid, config, backoff), m_preamble(preamble_time_signal(grid))
{
}

void frame_search::metric(
    const cfloat* rx, size_t first, size_t count, float* M, cfloat* P) const
{
    const int L = m_rule.N / 2, nr = m_rule.nr;
    // The per-sample terms once (non-finite samples as zero): c(m) = sum_r
    // conj(x_r[m]) x_r[m + L] and e(m) = sum_r |x_r[m]|^2, for m in [first, first +
    // count + L - 1) and [first, first + count + 2L - 1): the last position,
    // first + count - 1, reads samples up to first + count + 2L - 2 and no
    // further (the buffer may end there: ASan found the read one past it). Then
    // P(d) = sum c(d..d+L-1) and R(d) = (sum e(d..d+2L-1)) / 2, summed exactly at
    // each tile's first position and slid by c(d-1+L) - c(d-1) and
    // (e(d-1+2L) - e(d-1)) / 2 (double throughout).
    const size_t span = count + size_t(2 * L) - 1, terms = count + size_t(L) - 1;
    // Kept by the calling thread between calls (a search a frame would otherwise
    // map and fault in fresh pages every time); bound here, as the worker threads
    // that fill them have thread-local buffers of their own. Real and imaginary
    // parts in arrays of their own, so the loops vectorise.
    thread_local std::vector<double> kept_cr, kept_ci, kept_e;
    std::vector<double>&cr = kept_cr, &ci = kept_ci, &e = kept_e;
    cr.resize(terms);
    ci.resize(terms);
    e.resize(span);
    parallel_for(span, 16384, [&](size_t begin, size_t end) {
        metric_sample_terms(rx + first * size_t(nr),
                            nr,
                            L,
                            begin,
                            end,
                            terms,
                            cr.data(),
                            ci.data(),
                            e.data());
    });
    const size_t tiles = (count + k_metric_tile - 1) / k_metric_tile;
    parallel_for(tiles, 2, [&](size_t tile_begin, size_t tile_end) {
        for (size_t tile = tile_begin; tile < tile_end; ++tile) {
            const size_t d0 = tile * k_metric_tile,
                         d1 = std::min(count, d0 + k_metric_tile);
            double pr = 0, pi = 0, R = 0;
            for (int m = 0; m < L; ++m) {
                pr += cr[d0 + size_t(m)];
                pi += ci[d0 + size_t(m)];
                R += 0.5 * (e[d0 + size_t(m)] + e[d0 + size_t(m + L)]);
            }
            for (size_t d = d0; d < d1; ++d) {
                if (d > d0) {
                    pr += cr[d - 1 + size_t(L)] - cr[d - 1];
                    pi += ci[d - 1 + size_t(L)] - ci[d - 1];
                    R += 0.5 * (e[d - 1 + size_t(2 * L)] - e[d - 1]);
                }
                M[d] = R > 0 ? float((pr * pr + pi * pi) / (R * R)) : 0.0f;
                P[d] = cfloat(float(pr), float(pi));
            }
        }
    });
}

std::vector<float>
frame_search::matched_filter(const cfloat* rx, size_t lo, size_t hi, float cfo) const
{
    const int N = m_rule.N, nr = m_rule.nr;
    std::vector<cfloat> q(static_cast<size_t>(N));
    for (int m = 0; m < N; ++m)
        q[size_t(m)] = m_preamble[size_t(m)] *
                       std::polar(1.0f, float(2 * M_PI * double(cfo) * m / N));
    const size_t span = hi - lo + size_t(N);
    std::vector<cfloat> lanes(size_t(nr) * span);
    for (size_t n = 0; n < span; ++n)
        for (int r = 0; r < nr; ++r)
            lanes[size_t(r) * span + n] = cfloat(finite_sample(rx, lo + n, nr, r));
    std::vector<float> c(hi - lo + 1, 0.0f);
    // Tasks of about 50 000 complex products (a few dozen microseconds).
    const size_t per_task = std::max<size_t>(1, size_t(50000) / (size_t(nr) * size_t(N)));
    parallel_for(c.size(), per_task, [&](size_t begin, size_t end) {
        for (size_t d = lo + begin; d < lo + end; ++d)
            for (int r = 0; r < nr; ++r) {
                lv_32fc_t dot;
                volk_32fc_x2_conjugate_dot_prod_32fc(
                    &dot, &lanes[size_t(r) * span + (d - lo)], q.data(), unsigned(N));
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
                               uint64_t origin,
                               std::vector<run_decision>* remembered) const
{
    const sync_rule& g = m_rule;
    std::vector<run_decision> runs;
    if (samples < size_t(g.N) ||
        search_begin > samples - size_t(g.N)) // no whole window to search
        return walk_runs(
            runs,
            [](size_t) { return false; },
            g,
            samples,
            search_begin,
            search_begin,
            from,
            max_frames);
    // Positions a stretch at a time, as far as the walk needs them: a window of
    // several frames costs more to search than the one frame a call may take.
    // The walk sees every run of the positions searched, and the next search
    // goes on after them.
    const size_t last_position = samples - size_t(g.N);
    const size_t stretch =
        max_frames * g.frame_samples + g.lookback() + 2 * size_t(g.N + g.CP);
    // The metric from the tile the search begins in (its sums restart there).
    const size_t tile =
        size_t(origin + search_begin - align_down(origin + search_begin, k_metric_tile));
    if (tile > search_begin)
        throw std::logic_error(
            "mimo_gpu: frame_search: the samples do not reach back to the metric's tile");
    const size_t first = search_begin - tile; // tile_M[k] is position first + k
    thread_local std::vector<float> kept_M;   // kept between calls, as metric()'s
    thread_local std::vector<cfloat> kept_P;
    std::vector<float>& tile_M = kept_M;  // written by metric() before it is read:
    std::vector<cfloat>& tile_P = kept_P; // sized, never cleared (a fill a call)
    size_t last = search_begin - 1;       // the last position searched so far (none yet)
    auto extend = [&](size_t to) { // positions up to `to`, from the tile where the last
                                   // ones stopped
        const size_t restart = last + 1;
        const size_t from_tile =
            restart -
            size_t(origin + restart - align_down(origin + restart, k_metric_tile));
        const size_t at = std::max(from_tile, first);
        tile_M.resize(to + 1 - first);
        tile_P.resize(to + 1 - first);
        metric(rx,
               at,
               to + 1 - at,
               tile_M.data() + (at - first),
               tile_P.data() + (at - first));
        last = to;
    };
    // A stretch, ended or not: a caller taking one frame at a time from a whole
    // buffer (synchronize()) must not pay for the buffer on every call.
    extend(std::min(last_position, search_begin + stretch));
    const float* M = nullptr;
    const cfloat* P = nullptr;
    bool short_of_positions = false; // a run's decision needs positions not yet searched
    std::vector<run_decision> before;
    auto find_runs = [&] {
        M = tile_M.data() + tile;
        P = tile_P.data() + tile;
        before.swap(runs);
        runs.clear();
        const size_t count = last + 1 - search_begin;
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
        // A run decided before the search went on, or by an earlier call, keeps
        // its decision: it depends on the run's start alone.
        const auto take_decisions = [&](const std::vector<run_decision>& decided,
                                        uint64_t offset) {
            size_t j = 0;
            for (run_decision& run : runs) {
                while (j < decided.size() && decided[j].start < run.start + offset)
                    ++j;
                if (j < decided.size() && decided[j].start == run.start + offset &&
                    decided[j].decided && !run.decided &&
                    decided[j].sync.frame_start >= offset) {
                    run.sync = decided[j].sync;
                    run.sync.frame_start -= size_t(offset);
                    run.decided = true;
                }
            }
        };
        take_decisions(before, 0);
        if (remembered)
            take_decisions(*remembered, origin);
    };
    // What the next call may take from this one: the decided runs (stream
    // positions) of the positions searched, and those remembered after them.
    const auto remember = [&] {
        if (!remembered)
            return;
        std::vector<run_decision> kept;
        for (const run_decision& run : runs)
            // Decided on all its samples (not cut short by a stream's end).
            if (run.decided && run.start >= search_begin + size_t(g.CP) &&
                g.samples_to_decide(run.start) <= samples) {
                run_decision r = run;
                r.start += size_t(origin);
                r.last += size_t(origin);
                r.sync.frame_start += size_t(origin);
                kept.push_back(r);
            }
        for (const run_decision& run : *remembered)
            if (run.start > origin + last)
                kept.push_back(run);
        remembered->swap(kept);
    };
    find_runs();
    auto at = [&](size_t d) { return d - search_begin; };
    auto decide = [&](size_t k) {
        run_decision& run = runs[k];
        if (run.decided)
            return true;
        const size_t s = run.start;
        if (!ended && g.samples_to_decide(s) > samples)
            return false; // its samples have not come
        if (last < last_position && s + size_t(g.N + g.CP + g.CP / 2 + 2) > last) {
            short_of_positions =
                true; // its samples are there, the search stopped short of them
            return false;
        }
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
            const bool local_max = (d == v.lo || x >= c[d - v.lo - 1]) &&
                                   (d == v.hi || x >= c[d - v.lo + 1]);
            if (local_max && x >= k_path_fraction * cmax) {
                path = d;
                break;
            }
        }
        run.sync.frame_start = frame_start_of(path, g.backoff);
        run.decided = true;
        return true;
    };
    // Runs the walk will reach, decided side by side where there are several
    // (a batch of frames' preambles; each decision is the run's own, so the
    // walk then takes them in order as if it had decided them itself). A run
    // less than a frame after the last one counted lies inside that run's
    // frame, where the walk skips it undecided (a spurious run in the data):
    // it is left to the walk.
    const size_t frame_apart = g.frame_samples - size_t(g.N + 2 * g.CP);
    const auto decide_ahead = [&] {
        std::vector<size_t> ahead;
        size_t next_start = 0; // where the next frame's run can start
        for (size_t k = 0; k < runs.size() && ahead.size() <= max_frames; ++k) {
            const run_decision& run = runs[k];
            if (run.last < from || run.start < next_start)
                continue;
            next_start = run.start + frame_apart;
            const bool samples_there = ended || g.samples_to_decide(run.start) <= samples;
            const bool positions_there =
                last == last_position ||
                run.start + size_t(g.N + g.CP + g.CP / 2 + 2) <= last;
            if (!run.decided && samples_there && positions_there)
                ahead.push_back(k);
        }
        if (ahead.size() > 1)
            parallel_for(ahead.size(), 1, [&](size_t begin, size_t end) {
                for (size_t i = begin; i < end; ++i)
                    decide(ahead[i]);
            });
    };
    for (;;) {
        short_of_positions = false;
        decide_ahead();
        walk_result w =
            walk_runs(runs, decide, g, samples, search_begin, last + 1, from, max_frames);
        // Searched on while a run needs more positions, or while the walk wants
        // frames it has not found in the positions searched so far.
        const bool wants_frames =
            w.frames.size() < max_frames && !w.more && !w.needs && !w.cut.found;
        if (last == last_position || !(short_of_positions || wants_frames)) {
            // Stopped at max_frames before the positions' end, with samples
            // enough for another whole frame after it: the caller searches
            // again without new ones.
            if (last < last_position && w.frames.size() >= max_frames && !w.needs &&
                !w.cut.found && w.next_from + g.reach <= samples)
                w.more = true;
            remember();
            return w;
        }
        extend(std::min(last_position, last + stretch));
        find_runs();
    }
}

} // namespace detail
} // namespace mimo_gpu
