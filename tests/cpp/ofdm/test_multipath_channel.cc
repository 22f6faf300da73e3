// The multipath channel's Doppler fading: the Clarke/Jakes autocorrelation
// J0(2 pi fd tau) and Rayleigh amplitudes over an ensemble of channels,
// continuity across run() calls, the frequency response at a sample's time,
// and bad values.
#include "../test_support.h"

#include <mimo_gpu/multipath_channel.h>

#include <cmath>
#include <complex>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// A flat channel of one transmit antenna fed with ones: rx sample n of antenna
/// r is the fading h_r(n) itself (noise at -200 dB).
multipath_config flat_probe(int nr, double doppler, uint64_t seed)
{
    multipath_config c;
    c.nr = nr;
    c.nt = 1;
    c.profile = delay_profile::flat;
    c.sample_rate = 10e3;
    c.doppler = doppler;
    c.snr_db = 200;
    c.seed = seed;
    return c;
}

std::vector<cfloat> run_ones(multipath_channel& ch, size_t samples)
{
    const std::vector<cfloat> ones(samples, cfloat(1, 0));
    std::vector<cfloat> rx(ch.output_samples(samples) * size_t(ch.config().nr));
    ch.run(ones.data(), samples, rx.data());
    return rx;
}

} // namespace

TEST(multipath_channel,
     doppler_fading_has_the_clarke_autocorrelation_and_rayleigh_amplitudes)
{
    // 25 channels x 8 receive antennas, 0.4 s each at fd = 100 Hz (40 Doppler
    // periods): the time- and ensemble-averaged autocorrelation against J0.
    const uint64_t seed = fresh_seed();
    const double fs = 10e3, fd = 100;
    const int nr = 8, channels = 25;
    const size_t samples = 4000;
    const std::vector<double> lags_in_periods = { 0.05, 0.1, 0.2, 0.383, 0.61, 1.0, 2.0 };
    std::vector<std::complex<double>> correlation(lags_in_periods.size());
    double power = 0, deep_fades = 0, count = 0;
    for (int c = 0; c < channels; ++c) {
        multipath_channel ch(flat_probe(nr, fd, seed + uint64_t(c)));
        const std::vector<cfloat> h = run_ones(ch, samples);
        for (size_t n = 0; n < samples; ++n)
            for (int r = 0; r < nr; ++r) {
                const double p = std::norm(h[n * nr + size_t(r)]);
                power += p;
                deep_fades += p < 0.1;
                ++count;
            }
        for (size_t k = 0; k < lags_in_periods.size(); ++k) {
            const size_t lag = size_t(std::lround(lags_in_periods[k] * fs / fd));
            for (size_t n = 0; n + lag < samples; ++n)
                for (int r = 0; r < nr; ++r)
                    correlation[k] +=
                        std::complex<double>(h[(n + lag) * nr + size_t(r)]) *
                        std::conj(std::complex<double>(h[n * nr + size_t(r)])) /
                        double((samples - lag) * nr * channels);
        }
    }
    power /= count;
    std::printf("[ measured ] mean power %.3f, P(|h|^2 < 0.1) %.3f (Rayleigh 0.095)\n",
                power,
                deep_fades / count);
    EXPECT_NEAR(power, 1.0, 0.1);
    EXPECT_NEAR(deep_fades / count, 1 - std::exp(-0.1), 0.03);
    for (size_t k = 0; k < lags_in_periods.size(); ++k) {
        const double j0 = std::cyl_bessel_j(0.0, 2 * M_PI * lags_in_periods[k]);
        std::printf("[ measured ] lag fd*tau = %.3f: R %.3f%+.3fj, J0 %.3f\n",
                    lags_in_periods[k],
                    correlation[k].real(),
                    correlation[k].imag(),
                    j0);
        EXPECT_NEAR(correlation[k].real(), j0, 0.08) << "fd*tau = " << lags_in_periods[k];
        EXPECT_NEAR(correlation[k].imag(), 0.0, 0.08)
            << "fd*tau = " << lags_in_periods[k];
    }
}

TEST(multipath_channel, doppler_fading_runs_on_across_runs_and_block_fading_does_not)
{
    const uint64_t seed = fresh_seed();
    const size_t N = 1234;
    // One run of 2N samples against two runs of N: the same fading.
    multipath_channel whole(flat_probe(4, 37.5, seed)), halves(flat_probe(4, 37.5, seed));
    const std::vector<cfloat> a = run_ones(whole, 2 * N);
    std::vector<cfloat> b = run_ones(halves, N);
    const std::vector<cfloat> second = run_ones(halves, N);
    b.insert(b.end(), second.begin(), second.end());
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
        ASSERT_NEAR(std::abs(a[i] - b[i]), 0.0, 1e-5)
            << "sample " << i / 4 << " antenna " << i % 4;
    // The channel moves within a run: fd = 37.5 Hz at 10 kHz turns the taps
    // well within N samples.
    double moved = 0;
    for (int r = 0; r < 4; ++r)
        moved += std::abs(a[size_t(r)] - a[(N - 1) * 4 + size_t(r)]);
    EXPECT_GT(moved, 0.1);
    // Block fading: constant within a run, new taps in the next.
    multipath_channel block(flat_probe(4, 0, seed));
    const std::vector<cfloat> c1 = run_ones(block, N), c2 = run_ones(block, N);
    for (size_t n = 0; n < N; ++n)
        for (size_t r = 0; r < 4; ++r)
            ASSERT_NEAR(std::abs(c1[n * 4 + r] - c1[r]), 0.0, 1e-5);
    EXPECT_GT(std::abs(c2[0] - c1[0]) + std::abs(c2[1] - c1[1]), 1e-3);
}

TEST(multipath_channel, frequency_response_follows_the_fading_in_time)
{
    // Flat channel: the response at every subcarrier is the tap met by the
    // sample, which the probe reads directly.
    ofdm_grid g = ofdm_grid::preset("lte1.4");
    g.nt = 1;
    multipath_config c = flat_probe(2, 250, fresh_seed());
    c.sample_rate = g.sample_rate;
    multipath_channel ch(c);
    const size_t N = 3000;
    const std::vector<cfloat> h = run_ones(ch, N);
    std::vector<cfloat> H(size_t(g.used_subcarriers) * 2);
    for (size_t n : { size_t(0), size_t(17), size_t(1500), N - 1 }) {
        ch.frequency_response(g, 0, H.data(), double(n));
        for (int i = 0; i < g.used_subcarriers; i += 7)
            for (int r = 0; r < 2; ++r)
                ASSERT_NEAR(std::abs(H[size_t(i) * 2 + size_t(r)] - h[n * 2 + size_t(r)]),
                            0.0,
                            1e-5)
                    << "sample " << n << " subcarrier " << i << " antenna " << r;
    }
}

TEST(multipath_channel, bad_doppler_is_a_clear_error)
{
    for (double fd : { -1.0, double(NAN), double(INFINITY), 500.0, 1e6 }) {
        try {
            multipath_channel ch(flat_probe(2, fd, 1));
            ADD_FAILURE() << "doppler " << fd << " accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("doppler"), std::string::npos)
                << e.what();
        }
    }
    EXPECT_NO_THROW(multipath_channel(flat_probe(2, 499.0, 1)));
    EXPECT_NO_THROW(
        multipath_channel(flat_probe(2, 1e-300, 1))); // snapshots rarely, no overflow
    multipath_channel ch(flat_probe(2, 10.0, 1));
    ofdm_grid g = ofdm_grid::preset("lte1.4");
    g.nt = 1;
    std::vector<cfloat> H(size_t(g.used_subcarriers) * 2);
    EXPECT_THROW(ch.frequency_response(g, 0, H.data(), double(NAN)),
                 std::invalid_argument);
}
