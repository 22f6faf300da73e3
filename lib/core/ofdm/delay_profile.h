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

struct delay_support {
    float spread; ///< samples: the model's uniform width
    float centre; ///< samples: the model's centre relative to the mean delay
};

/// Bins searched on either side of the mean delay, at most (the CUDA kernel's
/// registers hold 2 * 1023 + 1).
constexpr int k_delay_support_max_reach = 1023;

/// The bins of the delay profile searched: +-reach around the mean delay.
MIMO_HD int delay_support_reach(int A, float samples_per_bin, float max_delay)
{
    int reach = int(max_delay / samples_per_bin);
    reach = reach < A / 2 - 1 ? reach : A / 2 - 1;
    return reach < k_delay_support_max_reach ? reach : k_delay_support_max_reach;
}

/// The power a bin of the support must exceed: `threshold` times the noise a
/// bin holds (its mean), and -30 dB of the peak (below the Hann window's
/// sidelobes, -31 dB: a path's sidelobes do not pass for paths).
MIMO_HD float delay_support_floor(float peak, float noise_per_bin, float threshold)
{
    return fmaxf(threshold * noise_per_bin, 1e-3f * peak);
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

/// The uniform model from the outermost paths' bins (first <= 0 <= last: the
/// mean delay stays inside), widened by the comb's resolution N / U samples
/// (one path's width), at least min_spread and at most max_spread wide.
MIMO_HD delay_support delay_support_of_paths(int first,
                                             int last,
                                             float samples_per_bin,
                                             float resolution,
                                             float min_spread,
                                             float max_spread)
{
    first = first < 0 ? first : 0;
    last = last > 0 ? last : 0;
    delay_support s;
    s.spread = float(last - first) * samples_per_bin + resolution;
    s.centre = 0.5f * float(last + first) * samples_per_bin;
    s.spread = s.spread < min_spread ? min_spread : s.spread;
    s.spread = s.spread > max_spread ? max_spread : s.spread;
    return s;
}

/// From the summed power profile `power[b]` (b = 0..A-1, bin b at delay
/// b * samples_per_bin, the upper half negative): the span of bins within
/// +-max_delay above delay_support_floor, narrowed to its outermost peaks (the
/// CPU's loops; the CUDA kernel reduces the same quantities across a block).
inline delay_support find_delay_support(const float* power,
                                        int A,
                                        float samples_per_bin,
                                        float resolution,
                                        float noise_per_bin,
                                        float threshold,
                                        float max_delay,
                                        float min_spread,
                                        float max_spread)
{
    const int reach = delay_support_reach(A, samples_per_bin, max_delay);
    const auto at = [&](int k) { return power[k < 0 ? k + A : k]; };
    float peak = 0;
    for (int k = -reach; k <= reach; ++k)
        peak = fmaxf(peak, at(k));
    const float floor = delay_support_floor(peak, noise_per_bin, threshold);
    int lo = reach + 1, hi = -reach - 1;
    for (int k = -reach; k <= reach; ++k)
        if (at(k) > floor) {
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }
    if (lo > hi) // nothing above the floor: the narrowest model
        return delay_support_of_paths(
            0, 0, samples_per_bin, resolution, min_spread, max_spread);
    return delay_support_of_paths(delay_support_peak(at, lo, 1, hi),
                                  delay_support_peak(at, hi, -1, lo),
                                  samples_per_bin,
                                  resolution,
                                  min_spread,
                                  max_spread);
}

/// How far above its mean noise a profile bin must stand: the sum of `count`
/// profiles has noise of relative spread 1/sqrt(count), so fewer profiles need
/// a wider margin against noise bins passing.
MIMO_HD float delay_support_threshold(int count)
{
    return 1.0f + 6.0f / sqrtf(float(count > 0 ? count : 1));
}

} // namespace detail
} // namespace mimo_gpu
