// One output sample of multipath_channel, written once for the CPU and the CUDA
// channel: the taps' sum over the delayed inputs, the CFO rotation and the
// noise. Both run the same float operations in the same order (no FMA
// contraction on either side), so they agree to the rounding of sin, cos and
// log. The noise is counter-based (Philox, keyed by the seed): sample m of run k
// always gets the same noise, however the samples are split among threads or
// kernels.
#pragma once

#include "../channel/channel_draws.h"
#include "../runtime/host_device.h"

#include <mimo_gpu/multipath_channel.h>

#include <math.h>

#include <cstddef>
#include <cstdint>

namespace mimo_gpu {
namespace detail {

constexpr int k_max_channel_taps = 16;      // the profiles have at most 9
constexpr int k_max_channel_antennas = 256; // multipath_channel's nr
/// Philox stream tag of the channel noise (channel_generator uses 0..2).
constexpr uint32_t k_channel_noise_stream = 3;

/// Everything one run of the channel needs, by value (kernel parameters).
struct channel_run {
    int nr = 0, nt = 0, taps = 0;
    int delays[k_max_channel_taps] = {}; ///< samples, ascending, first 0
    int timing_offset = 0;               ///< noise-only samples before the signal
    uint64_t samples = 0;                ///< input samples of the run
    double cfo_step = 0;                 ///< radians per output sample
    /// per receive antenna: sqrt(N0_r / 2)
    float noise_sigma[k_max_channel_antennas] = {};
    uint32_t key0 = 0, key1 = 0; ///< the seed
    uint64_t run = 0;            ///< runs before this one (the noise's counter)
    // Doppler (moving): the taps of input sample n are interpolated between the
    // snapshots around absolute time run_start + n, taken every `spacing`
    // samples from snapshot `first_snapshot` on; otherwise one set of taps.
    bool moving = false;
    uint64_t run_start = 0, first_snapshot = 0, snapshots = 0;
    int spacing = 1;

    MIMO_HD uint64_t output_samples() const
    {
        return uint64_t(timing_offset) + samples + uint64_t(delays[taps - 1]);
    }
    MIMO_HD int entries() const { return taps * nr * nt; }
};

/// Where snapshot interpolation for input sample n starts (snapshot k) and its
/// weight toward k + 1: exactly multipath_channel::taps_at's rule.
MIMO_HD void snapshot_position(const channel_run& c, double n, uint64_t& k, float& weight)
{
    double position =
        (double(c.run_start) + n) / double(c.spacing) - double(c.first_snapshot);
    const double last = double(c.snapshots - 1);
    position = position < 0.0 ? 0.0 : (position > last ? last : position);
    const uint64_t highest = c.snapshots > 1 ? c.snapshots - 2 : 0;
    k = uint64_t(position) < highest ? uint64_t(position) : highest;
    weight = float(position - double(k));
}

/// The noise of receive antennas 2 pair and 2 pair + 1 at output sample m.
MIMO_HD void channel_noise(const channel_run& c, uint64_t m, int pair, float* noise)
{
    const philox_block counter = { { uint32_t(m),
                                     uint32_t(c.run),
                                     k_channel_noise_stream | (uint32_t(pair) << 8),
                                     uint32_t(c.run >> 32) } };
    const philox_block x = philox4x32_10(counter, c.key0, c.key1);
    const int r = 2 * pair, next = r + 1 < c.nr ? r + 1 : r;
    gaussian_pair(x.v[0], x.v[1], c.noise_sigma[r], noise[0], noise[1]);
    gaussian_pair(x.v[2], x.v[3], c.noise_sigma[next], noise[2], noise[3]);
}

/// Output sample m of every receive antenna. tx[t] + 2 * n * tx_stride is input
/// sample n of antenna t (re, im); rx[r] + 2 * m * rx_stride receives output
/// sample m of antenna r. taps: the run's taps (nr x nt row-major per tap, re/im
/// interleaved) or, moving, its snapshots of them.
MIMO_HD void channel_output_sample(const channel_run& c,
                                   const float* const* tx,
                                   size_t tx_stride,
                                   const float* taps,
                                   uint64_t m,
                                   float* const* rx,
                                   size_t rx_stride)
{
    const int nr = c.nr, nt = c.nt, entries = c.entries();
    // The rotation of the CFO: phase 0 at output sample 0 of the run.
    const double phase = fmod(c.cfo_step * double(m), 6.283185307179586);
    const float cr = float(cos(phase)), ci = float(sin(phase));
    float noise[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int r = 0; r < nr; ++r) {
        float yr = 0.0f, yi = 0.0f;
        for (int l = 0; l < c.taps; ++l) {
            const int64_t n =
                int64_t(m) - int64_t(c.timing_offset) - int64_t(c.delays[l]);
            if (n < 0 || n >= int64_t(c.samples))
                continue;
            const float* a = taps + 2 * ((l * nr + r) * nt);
            const float* b = a;
            float w = 0.0f;
            if (c.moving) {
                uint64_t k;
                snapshot_position(c, double(n), k, w);
                a += 2 * size_t(k) * size_t(entries);
                b = c.snapshots > 1 ? a + 2 * entries : a;
            }
            float ar = 0.0f, ai = 0.0f;
            for (int t = 0; t < nt; ++t) {
                float hr = a[2 * t], hi = a[2 * t + 1];
                if (c.moving) {
                    hr = hr + w * (b[2 * t] - hr);
                    hi = hi + w * (b[2 * t + 1] - hi);
                }
                const float* x = tx[t] + 2 * size_t(n) * tx_stride;
                ar += hr * x[0] - hi * x[1];
                ai += hr * x[1] + hi * x[0];
            }
            yr += ar;
            yi += ai;
        }
        if ((r & 1) == 0)
            channel_noise(c, m, r / 2, noise);
        float* y = rx[r] + 2 * size_t(m) * rx_stride;
        y[0] = (yr * cr - yi * ci) + noise[2 * (r & 1)];
        y[1] = (yr * ci + yi * cr) + noise[2 * (r & 1) + 1];
    }
}

/// The kernel parameters of a run that `channel` prepared (prepare_run).
inline channel_run make_channel_run(const multipath_channel& channel,
                                    const multipath_run& run)
{
    const multipath_config& m = channel.config();
    const std::vector<int>& delays = channel.tap_delays();
    channel_run c;
    c.nr = m.nr;
    c.nt = m.nt;
    c.taps = int(delays.size()); // <= 9 (the profiles)
    for (int l = 0; l < c.taps; ++l)
        c.delays[l] = delays[size_t(l)];
    c.timing_offset = m.timing_offset;
    c.samples = run.samples;
    c.cfo_step = 2 * M_PI * m.cfo / m.sample_rate;
    for (int r = 0; r < m.nr; ++r)
        c.noise_sigma[r] = sqrtf(channel.antenna_noise_variance(r) / 2);
    c.key0 = uint32_t(m.seed);
    c.key1 = uint32_t(m.seed >> 32);
    c.run = run.index;
    c.moving = run.moving;
    c.run_start = run.start;
    c.first_snapshot = run.first_snapshot;
    c.snapshots = run.snapshots;
    c.spacing = run.snapshot_spacing;
    return c;
}

} // namespace detail
} // namespace mimo_gpu
