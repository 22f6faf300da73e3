// Inter-carrier interference cancellation (include/mimo_gpu/ici_canceller.h):
// frames through the Doppler channel model, whose taps change within each
// FFT window, received with every data symbol's true channel (the genie) or
// with LMMSE estimates; y - H x before and after cancelling with the sent
// symbols, and what the canceller refuses.
#include "../test_support.h"
#include "front_end_fixtures.h"

#include <mimo_gpu/ici_canceller.h>

#include <cmath>
#include <stdexcept>
#include <utility>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// Frames of small_grid(2) through EPA at `doppler` Hz onto 2 antennas, the
/// sent symbols, and each frame received with the true channel of every data
/// symbol (at its FFT window's middle) and with the receiver's estimates.
struct doppler_frames {
    ofdm_grid g = small_grid(2, modulation::qam64);
    int nr = 2;
    std::vector<std::vector<cfloat>> sent;
    std::vector<front_end_frame> genie, estimated;
    float n0 = 0;

    doppler_frames(double doppler,
                   double snr_db,
                   int frames,
                   uint64_t seed,
                   std::vector<int> pilots = { 0 })
    {
        g.pilot_positions = pilots;
        ofdm_transmitter tx(g);
        ofdm_receiver rx(g, receiver_config(nr, time_interpolation::lmmse));
        multipath_config mc = epa_channel(g, nr, snr_db, seed);
        mc.doppler = doppler;
        multipath_channel ch(mc);
        n0 = ch.noise_variance();
        for (int f = 0; f < frames; ++f) {
            loopback lb(tx, ch, seed + uint64_t(f));
            sent.emplace_back(g.data_elements() * g.nt);
            tx.map(lb.bits.data(), sent.back().data());
            const sync_result s = genie_sync(g, mc, rx.window_backoff());
            // each window's middle: its start plus (N - 1) / 2
            const std::vector<cfloat> H_symbols = true_data_symbol_channels(
                g,
                ch,
                rx.window_backoff(),
                s,
                g.cp_length - rx.window_backoff() + 0.5 * (g.fft_size - 1));
            genie.push_back(rx.receive_known_channels(
                lb.rx.data(), lb.rx_samples, s, H_symbols.data(), n0));
            estimated.push_back(rx.receive(lb.rx.data(), lb.rx_samples, s));
        }
    }

    /// Mean |y - H x|^2 per received value over `frames`, before and after
    /// cancelling with the sent symbols.
    std::pair<double, double> cancelled(const std::vector<front_end_frame>& frames) const
    {
        const ici_canceller ici(g);
        double before = 0, after = 0;
        for (size_t f = 0; f < frames.size(); ++f) {
            front_end_frame fe = frames[f];
            EXPECT_EQ(fe.symbols_per_channel, 1);
            before += residual(fe, sent[f]) / double(frames.size());
            ici.cancel(fe, sent[f].data());
            after += residual(fe, sent[f]) / double(frames.size());
        }
        return { before, after };
    }

    /// Mean |y - H x|^2 per received value, x the sent symbols.
    double residual(const front_end_frame& f, const std::vector<cfloat>& x) const
    {
        const size_t hn = size_t(nr) * g.nt;
        double e = 0;
        for (size_t p = 0; p < g.data_elements(); ++p)
            for (int r = 0; r < nr; ++r) {
                cfloat v = f.y[p * nr + r];
                for (int t = 0; t < g.nt; ++t)
                    v -= f.H[p * hn + size_t(r) * g.nt + t] * x[p * g.nt + t];
                e += std::norm(v);
            }
        return e / double(g.data_elements() * nr);
    }
};

} // namespace

TEST(ici_canceller,
     the_sent_symbols_cancel_the_interference_of_a_channel_turning_within_a_symbol)
{
    // 600 Hz at 15 kHz spacing (fd T = 0.04): the interference is some -20 dB
    // of the signal, far above the noise at 60 dB; with the true channel of
    // each symbol and the sent symbols only the slope's curvature within a
    // window is left.
    const doppler_frames fr(600, 60, 4, fresh_seed());
    const auto [before, after] = fr.cancelled(fr.genie);
    std::printf(
        "[ measured ] EPA 600 Hz, 60 dB, genie channels: |y - H x|^2 %.3g before, "
        "%.3g after cancelling (N0 %.3g)\n",
        before,
        after,
        double(fr.n0));
    EXPECT_GT(before, 100.0 * fr.n0) << "no interference to cancel";
    EXPECT_LT(after, before / 20); // 370-520x over 30 seeds
}

TEST(ici_canceller, estimated_channels_cancel_most_of_it)
{
    // The receiver's own LMMSE estimates in time (three pilot symbols a slot,
    // to follow 600 Hz) give the slope: at 40 dB the residual after cancelling
    // is the estimates' error, well below the interference.
    const doppler_frames fr(600, 40, 4, fresh_seed(), { 1, 4, 7 });
    const auto [before, after] = fr.cancelled(fr.estimated);
    std::printf(
        "[ measured ] EPA 600 Hz, 40 dB, LMMSE estimates: |y - H x|^2 %.3g before, "
        "%.3g after cancelling (N0 %.3g)\n",
        before,
        after,
        double(fr.n0));
    EXPECT_LT(after, before / 2); // 3.5-7x over 150 seeds
}

TEST(ici_canceller, a_scaled_frame_gives_the_scaled_interference)
{
    const doppler_frames fr(600, 30, 1, fresh_seed());
    const ici_canceller ici(fr.g);
    const std::vector<cfloat> want = ici.interference(fr.genie[0], fr.sent[0].data());
    for (float a : { 1e-12f, 3e-4f, 7.5f, 1e9f }) {
        front_end_frame scaled = fr.genie[0];
        for (auto& h : scaled.H)
            h *= a;
        for (auto& v : scaled.y)
            v *= a;
        const std::vector<cfloat> got = ici.interference(scaled, fr.sent[0].data());
        double err = 0, norm = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            err += std::norm(got[i] / a - want[i]);
            norm += std::norm(want[i]);
        }
        EXPECT_LT(err, 1e-10 * norm) << "scale " << a;
    }
}

TEST(ici_canceller, non_finite_decisions_and_channels_add_nothing)
{
    const doppler_frames fr(600, 30, 1, fresh_seed());
    const ici_canceller ici(fr.g);
    std::vector<cfloat> erased(fr.sent[0].size(), cfloat(NAN, 0));
    for (const cfloat& v : ici.interference(fr.genie[0], erased.data()))
        ASSERT_EQ(v, cfloat(0, 0));
    // One channel value infinite: every other value stays finite.
    front_end_frame bad = fr.genie[0];
    bad.H[17] = cfloat(INFINITY, 0);
    std::vector<cfloat> half = fr.sent[0];
    half[5] = cfloat(0, NAN);
    for (const cfloat& v : ici.interference(bad, half.data()))
        ASSERT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag()));
}

TEST(ici_canceller, frames_without_a_channel_per_symbol_and_bad_sizes_are_refused)
{
    const ofdm_grid g = small_grid(2);
    const ici_canceller ici(g);
    const int nr = 2;
    front_end_frame held; // hold in time: a channel per subcarrier and slot
    held.channels = size_t(g.slots) * g.used_subcarriers;
    held.symbols_per_channel = g.data_symbols;
    held.H.assign(held.channels * nr * g.nt, cfloat(1, 0));
    held.y.assign(g.data_elements() * nr, cfloat(1, 0));
    std::vector<cfloat> x(g.data_elements() * g.nt, cfloat(1, 0));
    EXPECT_THROW(ici.interference(held, x.data()), std::invalid_argument);

    front_end_frame f;
    f.channels = g.data_elements();
    f.symbols_per_channel = 1;
    f.H.assign(f.channels * nr * g.nt, cfloat(1, 0));
    f.y.assign(f.channels * nr, cfloat(1, 0));
    EXPECT_NO_THROW(ici.interference(f, x.data()));
    EXPECT_THROW(ici.interference(f, nullptr), std::invalid_argument);
    front_end_frame short_h = f;
    short_h.H.pop_back();
    EXPECT_THROW(ici.cancel(short_h, x.data()), std::invalid_argument);
    front_end_frame empty_y = f;
    empty_y.y.clear();
    EXPECT_THROW(ici.cancel(empty_y, x.data()), std::invalid_argument);
    EXPECT_EQ(empty_y.y.size(), 0u);
    // a bad grid is the grid's error
    ofdm_grid bad = g;
    bad.used_subcarriers = 0;
    EXPECT_THROW(ici_canceller{ bad }, std::invalid_argument);
}
