// The LMMSE model's delay support from the pilots, written once for the CPU
// receiver and the CUDA kernels. Each antenna pair's comb of LS estimates (the
// mean delay turned out) is windowed (Hann) and transformed to the delay domain
// (an inverse DFT of A points, zero-padded); the powers, summed over pairs and
// pilot symbols, are the frame's delay-power profile. The support is the span
// of delays whose power stands clearly above the noise: a uniform model over
// it covers a channel's weak late paths (EPA's -20 dB tap 12 samples out at
// 30.72 Msps), which a spread fitted to the correlation of neighbouring pilots
// misses (a floor of -25 dB in the estimates, docs/front_end.md).
#pragma once

#include "../runtime/host_device.h"

#include <math.h>

namespace mimo_gpu {
namespace detail {

/// Points of the delay-domain transform for combs of at most `comb` pilots
/// nt subcarriers apart in an N-point FFT: a power of two, at least the comb
/// and at least N / nt (a bin at most one sample of delay).
inline int delay_profile_points(int comb, int N, int nt)
{
    int A = 16;
    while (A < comb || A * nt < N)
        A *= 2;
    return A;
}

/// Hann weight of comb position m of M (its squares sum to 3M/8 for M >= 3).
MIMO_HD float delay_profile_window(int m, int M)
{
    const float s = sinf(3.14159265358979f * (float(m) + 0.5f) / float(M));
    return s * s;
}

/// Bins searched on either side of the mean delay, at most (the CUDA kernel's
/// registers hold 2 * 1023 + 1).
constexpr int k_delay_support_max_reach = 1023;

/// What the search needs of the grid, made once on the host and passed to the
/// CPU search and the CUDA kernels alike.
struct delay_profile_geometry {
    int points;            ///< A
    int profiles;          ///< a frame's profiles summed: slots * nt * nr
    int reach;             ///< bins searched on either side of the mean delay
    float samples_per_bin; ///< N / (nt A)
    float resolution;      ///< N / U samples: one path's width
    float window_energy;   ///< the frame's profiles' window squares, summed
    float threshold;       ///< a bin of the support stands this far above its noise
    float min_spread, max_spread; ///< samples: half a sample, twice the CP
};

/// The geometry of a grid's combs (antenna t's: subcarriers t, t + nt, ...).
/// The threshold: the sum of `profiles` profiles has noise of relative
/// spread 1/sqrt(profiles), so fewer profiles need a wider margin against
/// noise bins passing. Paths are searched within twice the CP.
inline delay_profile_geometry
make_delay_profile_geometry(int N, int cp, int U, int nt, int nr, int slots)
{
    delay_profile_geometry g;
    g.points = delay_profile_points((U + nt - 1) / nt, N, nt);
    g.profiles = slots * nt * nr;
    g.samples_per_bin = float(N) / float(nt * g.points);
    g.max_spread = 2.0f * float(cp);
    g.min_spread = 0.5f;
    g.reach = int(g.max_spread / g.samples_per_bin);
    g.reach = g.reach < g.points / 2 - 1 ? g.reach : g.points / 2 - 1;
    g.reach = g.reach < k_delay_support_max_reach ? g.reach : k_delay_support_max_reach;
    g.resolution = float(N) / float(U);
    double energy = 0;
    for (int t = 0; t < nt; ++t) {
        const int M = (U - t + nt - 1) / nt;
        for (int m = 0; m < M; ++m)
            energy += double(delay_profile_window(m, M)) * delay_profile_window(m, M);
    }
    g.window_energy = float(energy * slots * nr);
    g.threshold = 1.0f + 6.0f / sqrtf(float(g.profiles));
    return g;
}

struct delay_support {
    float spread; ///< samples: the model's uniform width
    float centre; ///< samples: the model's centre relative to the mean delay
};

/// The power a bin of the support must exceed: the threshold times the noise
/// a bin holds (its mean, from the LS noise per pilot), and -30 dB of the peak
/// (below the Hann window's sidelobes, -31 dB: a path's sidelobes do not pass
/// for paths).
MIMO_HD float
delay_support_floor(const delay_profile_geometry& g, float peak, float ls_noise)
{
    return fmaxf(g.threshold * ls_noise * g.window_energy, 1e-3f * peak);
}

/// From an edge bin of the span above the floor, inwards (step +1 from the
/// first, -1 from the last) while the power rises: the outermost path's own
/// bin. The window spreads each path over its main lobe; the paths are the
/// profile's peaks. power(k): the power at signed bin k.
template <class Power>
MIMO_HD int delay_support_peak(const Power& power, int edge, int step, int stop)
{
    int k = edge;
    while (k != stop && power(k + step) > power(k))
        k += step;
    return k;
}

/// The uniform model over the span lo..hi of bins above the floor (lo > hi:
/// none), narrowed to its outermost peaks (first <= 0 <= last: the mean delay
/// stays inside), widened by one path's width, within [min, max] spread.
template <class Power>
MIMO_HD delay_support
delay_support_of_span(const delay_profile_geometry& g, const Power& power, int lo, int hi)
{
    int first = lo > hi ? 0 : delay_support_peak(power, lo, 1, hi);
    int last = lo > hi ? 0 : delay_support_peak(power, hi, -1, lo);
    first = first < 0 ? first : 0;
    last = last > 0 ? last : 0;
    delay_support s;
    s.spread = float(last - first) * g.samples_per_bin + g.resolution;
    s.centre = 0.5f * float(last + first) * g.samples_per_bin;
    s.spread = s.spread < g.min_spread ? g.min_spread : s.spread;
    s.spread = s.spread > g.max_spread ? g.max_spread : s.spread;
    return s;
}

/// Bins either side of a span of paths left out of the noise estimate: a
/// path's Hann main lobe and the sidelobes that stand above the noise at high
/// SNR (8 of the comb's own bins, N / U samples each).
MIMO_HD int delay_noise_guard(const delay_profile_geometry& g)
{
    return int(ceilf(8.0f * g.resolution / g.samples_per_bin));
}

/// Whether signed bin k (-A/2 <= k < A/2) holds noise alone: outside the span
/// lo..hi of bins above the floor (lo > hi: none, the mean delay's bin then)
/// and its guard, on the circle of A bins (a span near +-A/2 guards the
/// other end too).
MIMO_HD bool delay_noise_bin(const delay_profile_geometry& g, int k, int lo, int hi)
{
    const int guard = delay_noise_guard(g), A = g.points;
    if (lo > hi)
        lo = hi = 0;
    for (int turn = -A; turn <= A; turn += A)
        if (k + turn >= lo - guard && k + turn <= hi + guard)
            return false;
    return true;
}

/// Noise-only bins a noise estimate needs at least (fewer on short combs: the
/// second-difference estimate stands).
constexpr int k_delay_noise_min_bins = 16;

/// The LS noise per pilot from the sum and count of the noise-only bins'
/// powers (a bin holds ls_noise * window_energy); -1 where too few.
MIMO_HD float
delay_profile_ls_noise(const delay_profile_geometry& g, float noise_sum, int noise_bins)
{
    return noise_bins >= k_delay_noise_min_bins
               ? noise_sum / float(noise_bins) / g.window_energy
               : -1.0f;
}

/// The span lo..hi of bins within +-reach above the floor (lo > hi: none).
struct delay_span {
    int lo, hi;
};

/// What the delay profile tells: the LMMSE model's support, and the LS noise
/// per pilot from the bins that hold noise alone (-1: too few such bins).
struct delay_profile_result {
    delay_support support;
    float ls_noise;
    delay_span span; ///< the bins of the channel's paths (the noise's are beside it)
};

/// From the summed power profile `power[b]` (b = 0..A-1, bin b at delay
/// b * samples_per_bin, the upper half negative), the CPU's loops (the CUDA
/// kernel reduces the same quantities across a block): the span above the
/// floor that `ls_noise` (the second-difference estimate) gives; the noise
/// from the bins away from it; the span again with that noise, and the noise
/// again from the bins away from that span (paths the first floor hid); the
/// last span's support.
/// The second-difference estimate reads high where the channel curves along
/// the comb (EVA: 2-3.6x): the bins beyond the channel's delays do not.
inline delay_profile_result
search_delay_profile(const delay_profile_geometry& g, const float* power, float ls_noise)
{
    const int A = g.points;
    const auto at = [&](int k) { return power[k < 0 ? k + A : k]; };
    float peak = 0;
    for (int k = -g.reach; k <= g.reach; ++k)
        peak = fmaxf(peak, at(k));
    const auto span_above = [&](float noise) {
        const float floor = delay_support_floor(g, peak, noise);
        delay_span s{ g.reach + 1, -g.reach - 1 };
        for (int k = -g.reach; k <= g.reach; ++k)
            if (at(k) > floor) {
                s.lo = k < s.lo ? k : s.lo;
                s.hi = k > s.hi ? k : s.hi;
            }
        return s;
    };
    const auto noise_beside = [&](const delay_span& s) {
        float sum = 0;
        int bins = 0;
        for (int k = -A / 2; k < A / 2; ++k)
            if (delay_noise_bin(g, k, s.lo, s.hi)) {
                sum += at(k);
                ++bins;
            }
        return delay_profile_ls_noise(g, sum, bins);
    };
    delay_span span = span_above(ls_noise);
    delay_profile_result r;
    r.ls_noise = noise_beside(span);
    if (r.ls_noise >= 0) { // once more: weak paths under the first floor left out
        span = span_above(r.ls_noise);
        const float again = noise_beside(span);
        if (again >= 0)
            r.ls_noise = again;
    }
    r.support = delay_support_of_span(g, at, span.lo, span.hi);
    r.span = span;
    return r;
}

} // namespace detail
} // namespace mimo_gpu
