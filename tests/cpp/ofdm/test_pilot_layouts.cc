// Pilot layouts (ofdm_grid::pilot_positions): where pilot and data symbols sit,
// the layouts a grid cannot hold as clear errors, every layout (the default
// one included) through transmitter and an identity channel into the receiver
// on each backend, and denser layouts following fast fading where one pilot
// symbol a slot cannot.
#include "../../../lib/core/ofdm/pilot_layout.h"
#include "../backend_test.h"
#include "front_end_fixtures.h"

#include <algorithm>
#include <set>
#include <stdexcept>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

ofdm_grid grid_with(std::vector<int> positions, int data_symbols = 6, int slots = 2)
{
    ofdm_grid g = small_grid(2);
    g.data_symbols = data_symbols;
    g.slots = slots;
    g.pilot_positions = std::move(positions);
    return g;
}

/// The layouts the tests walk: the default, one pilot symbol elsewhere, two,
/// and four (NR's most), one slot of several pilot symbols.
std::vector<ofdm_grid> layouts()
{
    return { grid_with({ 0 }),
             grid_with({ 6 }),
             grid_with({ 2, 5 }),
             grid_with({ 0, 3, 6, 9 }),
             grid_with({ 1, 6 }, 6, 1) };
}

template <typename F>
void expect_invalid(F&& f, const std::string& fragment)
{
    try {
        f();
        ADD_FAILURE() << "no error; expected one saying '" << fragment << "'";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

} // namespace

TEST(pilot_layout, pilot_and_data_symbols_fill_the_frame_once_each_in_order)
{
    for (const ofdm_grid& g : layouts()) {
        g.validate();
        const int P = g.pilot_symbols_per_slot();
        EXPECT_EQ(g.frame_symbols(), 1 + g.slots * (P + g.data_symbols));
        EXPECT_EQ(g.frame_samples(), g.frame_symbols() * g.symbol_samples());
        std::set<int> seen;
        for (int j = 0; j < g.slots; ++j) {
            for (int p = 0; p < P; ++p) {
                const int k = g.pilot_symbol(j, p);
                EXPECT_EQ(k, 1 + j * g.slot_symbols() + g.pilot_positions[size_t(p)]);
                EXPECT_TRUE(seen.insert(k).second) << "symbol " << k << " twice";
            }
            for (int s = 0; s < g.data_symbols; ++s) {
                const int k = g.data_symbol(j, s);
                EXPECT_TRUE(seen.insert(k).second) << "symbol " << k << " twice";
                if (s > 0) {
                    EXPECT_GT(k, g.data_symbol(j, s - 1));
                }
                EXPECT_EQ((k - 1) / g.slot_symbols(), j)
                    << "data symbol outside its slot";
            }
        }
        EXPECT_EQ(seen.size(), size_t(g.frame_symbols() - 1)) << describe(g);
        EXPECT_EQ(*seen.begin(), 1);
        EXPECT_EQ(*seen.rbegin(), g.frame_symbols() - 1);
        // The pilot symbols around each data symbol, as the time filters take them.
        const detail::slot_layout l = detail::layout_of(g);
        for (int j = 0; j < g.slots; ++j)
            for (int s = 0; s < g.data_symbols; ++s) {
                const int t = l.data_time(j, s), q = l.pilot_before(t);
                EXPECT_TRUE(q < 0 || l.pilot_time(q) < t);
                EXPECT_TRUE(q + 1 >= l.pilots() || l.pilot_time(q + 1) > t);
                const detail::time_pair tp = detail::linear_time_pair(l, t);
                EXPECT_GE(tp.a, 0.0f);
                EXPECT_LT(tp.a, 1.0f);
            }
    }
}

TEST(pilot_layout, a_layout_the_grid_cannot_hold_is_a_clear_error)
{
    expect_invalid([] { grid_with({}).validate(); }, "1..4 pilot symbols, got 0");
    expect_invalid(
        [] {
            grid_with({ 0, 1, 2, 3, 4 }).validate();
        },
        "1..4 pilot symbols, got 5");
    expect_invalid([] { grid_with({ 7 }).validate(); },
                   "pilot position 7 is outside the slot of 7 symbols");
    expect_invalid([] { grid_with({ -1 }).validate(); }, "pilot position -1 is outside");
    expect_invalid(
        [] {
            grid_with({ 3, 1 }).validate();
        },
        "ascending and distinct, got 3 then 1");
    expect_invalid([] { grid_with({ 2, 2 }).validate(); }, "ascending and distinct");
    // Every user of a grid checks it first.
    expect_invalid([] { ofdm_transmitter t(grid_with({ 9 })); }, "pilot position 9");
    expect_invalid([] { ofdm_receiver r(grid_with({ 9 }), receiver_config(2)); },
                   "pilot position 9");
    // As users write them.
    EXPECT_EQ(ofdm_grid::parse_pilot_positions("0"), std::vector<int>{ 0 });
    EXPECT_EQ(ofdm_grid::parse_pilot_positions("3,10"), (std::vector<int>{ 3, 10 }));
    EXPECT_EQ(ofdm_grid::parse_pilot_positions(" 2 7, 11 "),
              (std::vector<int>{ 2, 7, 11 }));
    expect_invalid([] { ofdm_grid::parse_pilot_positions(""); }, "none given");
    expect_invalid([] { ofdm_grid::parse_pilot_positions("1.5"); }, "not an integer");
    expect_invalid([] { ofdm_grid::parse_pilot_positions("0,x"); }, "'x' is not");
    EXPECT_EQ(pilot_positions_text({ 2, 7, 11 }), "2,7,11");
    // A receiver made for one layout refuses frames recorded with another.
    EXPECT_EQ(frame_mismatch(grid_with({ 0 }), grid_with({ 0 })), "");
    EXPECT_EQ(frame_mismatch(grid_with({ 2, 5 }), grid_with({ 0 })),
              "pilot_positions 2,5 (recorded) against 0 (expected)");
    EXPECT_NE(describe(grid_with({ 2, 5 })).find("2 pilots + 6 data) pilots at 2,5"),
              std::string::npos)
        << describe(grid_with({ 2, 5 }));
}

class pilot_layouts : public backend_test
{
};

TEST_P(pilot_layouts, every_layout_round_trips_through_transmitter_and_receiver)
{
    // Antennas wired straight through, no noise: with every layout and time
    // filter, H = I and y = the mapped symbols at every resource element.
    const uint64_t seed = fresh_seed();
    const mimo_gpu::backend b = backend_from_string(backend());
    for (const ofdm_grid& g : layouts())
        for (time_interpolation ti : { time_interpolation::hold,
                                       time_interpolation::linear,
                                       time_interpolation::lmmse }) {
            SCOPED_TRACE(describe(g));
            ofdm_transmitter tx(g);
            multipath_config mc;
            mc.nr = 2;
            mc.nt = 2;
            mc.profile = delay_profile::flat;
            mc.snr_db = 200;
            mc.timing_offset = 50;
            multipath_channel ch(mc);
            loopback lb(tx, ch, seed);
            std::fill(lb.rx.begin(), lb.rx.end(), cfloat(0, 0));
            for (int n = 0; n < g.frame_samples(); ++n)
                for (int r = 0; r < 2; ++r)
                    lb.rx[size_t(50 + n) * 2 + r] = lb.tx[size_t(n) * 2 + r];
            ofdm_receiver_config rc =
                receiver_config(2, ti, b, frequency_interpolation::linear);
            rc.window_backoff = 0;
            ofdm_receiver rx(g, rc);
            const sync_result s = rx.synchronize(lb.rx.data(), lb.rx_samples);
            ASSERT_TRUE(s.found && s.complete);
            EXPECT_EQ(s.frame_start, size_t(50 + g.cp_length));
            EXPECT_NEAR(s.cfo, 0.0f, 1e-4f);
            const front_end_frame f = rx.receive(lb.rx.data(), lb.rx_samples, s);
            ASSERT_EQ(f.symbols_per_channel,
                      ti == time_interpolation::hold ? g.data_symbols : 1);
            ASSERT_EQ(f.channels * size_t(f.symbols_per_channel), g.data_elements());
            ASSERT_EQ(f.pilot_channels.size(),
                      size_t(g.pilot_symbols()) * g.used_subcarriers * 4);
            for (size_t c = 0; c < f.channels; ++c)
                for (int e = 0; e < 4; ++e)
                    ASSERT_LT(std::abs(f.H[c * 4 + size_t(e)] -
                                       cfloat(e == 0 || e == 3 ? 1.0f : 0.0f, 0)),
                              1e-4f)
                        << "channel " << c;
            std::vector<cfloat> sym(g.data_elements() * 2);
            tx.map(lb.bits.data(), sym.data());
            EXPECT_LT(mean_squared_error(f.y, sym), 1e-9);
            EXPECT_LT(f.n0, 1e-8f);
        }
}

INSTANTIATE_TEST_SUITE_P(backends, pilot_layouts, ::testing::Values("cpu", "cuda"));

TEST(pilot_layout, denser_layouts_follow_fast_fading)
{
    // EPA at 300 Hz (0.3 of a Doppler cycle a slot), 25 dB, slots of 14
    // symbols: the channel of every data element against the truth at its
    // symbol. Two pilot symbols a slot halve the distance the time filter
    // bridges; with LMMSE in time the error falls far below one pilot symbol's
    // (seen over 8 seeds: 0.14-0.35 -> 0.0007-0.002 -> 0.0003-0.00035), and
    // with several pilot symbols LMMSE beats linear 4-14x. With one a slot
    // the frame has two pilot symbols: LMMSE and linear (0.2-0.45) both fail;
    // only hold's 0.4-0.57 is worse.
    const uint64_t seed = fresh_seed();
    const std::vector<std::pair<std::vector<int>, int>> layouts_14 = {
        { { 0 }, 13 }, { { 3, 10 }, 12 }, { { 1, 5, 8, 12 }, 10 }
    };
    std::vector<double> lmmse_error;
    for (const auto& [positions, D] : layouts_14) {
        const ofdm_grid g = grid_with(positions, D, 2);
        ofdm_transmitter tx(g);
        ofdm_receiver hold(g, receiver_config(2, time_interpolation::hold));
        ofdm_receiver linear(g, receiver_config(2, time_interpolation::linear));
        ofdm_receiver lmmse(g, receiver_config(2, time_interpolation::lmmse));
        multipath_config mc = epa_channel(g, 2, 25, seed);
        mc.doppler = 300;
        multipath_channel ch(mc);
        double e_hold = 0, e_linear = 0, e_lmmse = 0, doppler = 0;
        int frames = 0, lost = 0; // (a frame's preamble in a deep fade: seen 1 in ~500)
        for (int frame = 0; frame < 12; ++frame) {
            loopback lb(tx, ch, seed + uint64_t(frame));
            const sync_result s = hold.synchronize(lb.rx.data(), lb.rx_samples);
            if (!s.found || !s.complete) {
                ++lost;
                continue;
            }
            ++frames;
            e_hold += data_channel_mse(
                g, ch, mc, s, hold.receive(lb.rx.data(), lb.rx_samples, s));
            e_linear += data_channel_mse(
                g, ch, mc, s, linear.receive(lb.rx.data(), lb.rx_samples, s));
            const front_end_frame fm = lmmse.receive(lb.rx.data(), lb.rx_samples, s);
            e_lmmse += data_channel_mse(g, ch, mc, s, fm);
            doppler += fm.doppler;
        }
        ASSERT_LE(lost, 1) << "frames whose preamble was not found";
        doppler /= frames;
        std::printf("[ measured ] EPA 300 Hz, 25 dB, pilots at %s (%d data): channel "
                    "MSE per data element: hold %.3g, linear %.3g, LMMSE %.3g; Doppler "
                    "estimated %.0f Hz\n",
                    pilot_positions_text(positions).c_str(),
                    D,
                    e_hold / frames,
                    e_linear / frames,
                    e_lmmse / frames,
                    doppler);
        EXPECT_LT(e_lmmse, e_hold) << pilot_positions_text(positions);
        if (positions.size() > 1) {
            EXPECT_LT(e_lmmse, 0.5 * e_linear) << pilot_positions_text(positions);
        }
        lmmse_error.push_back(e_lmmse / frames);
    }
    EXPECT_LT(lmmse_error[1], 0.1 * lmmse_error[0]) << "two pilot symbols a slot";
    // Four against two: 0.1-0.43 of the error in 59 of 61 seeds, 0.71 and 0.87
    // in the other two (one frame's misjudged Doppler outweighs the rest; the
    // first seen on the H100, MIMO_GPU_TEST_SEED=4351963127325492282).
    EXPECT_LT(lmmse_error[2], lmmse_error[1]) << "four pilot symbols a slot";
}
