// Noise per receive antenna (lib/core/ofdm/antenna_noise.h): each antenna's
// noise measured from the pilots against the channel's own, the frame
// whitened where the antennas differ and left as measured where they do not,
// the same answer for an input scaled by any factor, the gain of whitening on
// a noisy antenna, the genie's whitening, and CUDA against the CPU.
#include "../../../lib/core/ofdm/antenna_noise.h"
#include "../backend_test.h"
#include "front_end_fixtures.h"

#include <mimo_gpu/detector_registry.h>

#include <algorithm>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// nr20 4x4, 2 slots of 6 data symbols, EPA at `snr_db` with each antenna's
/// noise offset by `antenna_db`.
struct noisy_antennas {
    ofdm_grid g = nr20_grid(6);
    multipath_config mc;
    std::unique_ptr<multipath_channel> ch;
    std::unique_ptr<loopback> frame;
    noisy_antennas(std::vector<double> antenna_db,
                   double snr_db,
                   uint64_t seed,
                   int nt = 4)
    {
        g.nt = nt;
        mc = epa_channel(g, 4, snr_db, seed);
        mc.antenna_noise_db = std::move(antenna_db);
        ch = std::make_unique<multipath_channel>(mc);
        ofdm_transmitter tx(g);
        frame = std::make_unique<loopback>(tx, *ch, seed);
    }
    float true_n0(int r) const { return ch->antenna_noise_variance(r); }
    front_end_frame receive(const ofdm_receiver_config& c) const
    {
        ofdm_receiver rx(g, c);
        const sync_result s = rx.synchronize(frame->rx.data(), frame->rx_samples);
        EXPECT_TRUE(s.found && s.complete);
        return rx.receive(frame->rx.data(), frame->rx_samples, s);
    }
};

ofdm_receiver_config config_on(const std::string& backend_name,
                               bool per_antenna = true,
                               time_interpolation time = time_interpolation::hold)
{
    ofdm_receiver_config c =
        receiver_config(4, time, backend_name == "cuda" ? backend::cuda : backend::cpu);
    c.noise_per_antenna = per_antenna;
    return c;
}

/// Raw bit errors of the MMSE detector's hard decisions on a frame.
int mmse_bit_errors(const ofdm_grid& g, const front_end_frame& f, const loopback& lb)
{
    auto det = make_detector("mmse", { { 4, g.nt }, g.mod, {} }, backend::cpu);
    std::vector<float> llr(lb.bits.size());
    det->detect(detector_input_of(f), llr.data());
    int errors = 0;
    for (size_t b = 0; b < lb.bits.size(); ++b)
        errors += (llr[b] < 0) != (lb.bits[b] != 0);
    return errors;
}

class antenna_noise : public backend_test
{
};

} // namespace

TEST(antenna_noise_rule, whitens_only_clearly_different_finite_noise)
{
    float scale[4];
    const float alike[4] = { 1.0f, 1.2f, 0.9f, 1.1f };
    EXPECT_FALSE(detail::antenna_whitening(alike, 4, 1.05f, scale));
    for (float s : scale)
        EXPECT_EQ(s, 1.0f);
    const float apart[4] = { 1.0f, 1.0f, 1.0f, 4.0f };
    EXPECT_TRUE(detail::antenna_whitening(apart, 4, 1.75f, scale));
    EXPECT_FLOAT_EQ(scale[0], std::sqrt(1.75f));
    EXPECT_FLOAT_EQ(scale[3], std::sqrt(1.75f / 4.0f));
    const float silent[2] = { 0.0f, 1.0f };
    EXPECT_FALSE(detail::antenna_whitening(silent, 2, 0.5f, scale));
    const float broken[2] = { 1.0f, NAN };
    EXPECT_FALSE(detail::antenna_whitening(broken, 2, NAN, scale));
    EXPECT_EQ(scale[1], 1.0f);
}

TEST_P(antenna_noise, each_antennas_noise_is_measured_and_the_frame_whitened)
{
    // Antennas 0, 3, 6 and 12 dB above the SNR's noise (radio chains apart):
    // each antenna's measured noise within 20 % of the channel's, the frame's
    // N0 their mean, and y and H scaled by sqrt(N0 / N0_r).
    // Also three quiet antennas beside one 20 dB noisier, whose noise floor
    // would hide the weak paths the quiet ones show (the profile searched
    // again, each antenna weighted by its noise).
    const uint64_t seed = fresh_seed();
    for (uint64_t k = 0; k < 4; ++k) {
        const std::vector<double> db = k < 3 ? std::vector<double>{ 0, 3, 6, 12 }
                                             : std::vector<double>{ 0, 0, 0, 20 };
        const noisy_antennas case_(db, 22, seed + k);
        const front_end_frame f = case_.receive(config_on(backend()));
        ASSERT_EQ(f.antenna_n0.size(), 4u);
        ASSERT_EQ(f.antenna_scale.size(), 4u);
        EXPECT_TRUE(f.whitened);
        double mean = 0;
        for (int r = 0; r < 4; ++r) {
            const double truth = case_.true_n0(r);
            mean += truth / 4;
            EXPECT_NEAR(f.antenna_n0[size_t(r)], truth, 0.2 * truth) << "antenna " << r;
            EXPECT_NEAR(f.antenna_scale[size_t(r)],
                        std::sqrt(f.n0 / f.antenna_n0[size_t(r)]),
                        1e-5f);
            if (k == 0 || k == 3)
                std::printf(
                    "[ measured ] antenna %d: N0 %.3e, measured %.3e, scale %.3f\n",
                    r,
                    truth,
                    f.antenna_n0[size_t(r)],
                    f.antenna_scale[size_t(r)]);
        }
        EXPECT_NEAR(f.n0, mean, 0.15 * mean);
        // The unwhitened receiver's y, scaled, is this one's.
        const front_end_frame plain = case_.receive(config_on(backend(), false));
        EXPECT_FALSE(plain.whitened);
        ASSERT_EQ(plain.y.size(), f.y.size());
        for (size_t i = 0; i < f.y.size(); i += 97)
            EXPECT_NEAR(std::abs(plain.y[i] * f.antenna_scale[i % 4] - f.y[i]),
                        0.0f,
                        1e-4f * std::max(1.0f, std::abs(f.y[i])))
                << "element " << i;
    }
}

TEST_P(antenna_noise, alike_antennas_keep_y_and_h_as_measured)
{
    // Antennas with the same noise: every estimate within the rule's 1.5 dB,
    // no whitening, H and y exactly as with one N0 for all.
    const uint64_t seed = fresh_seed();
    for (uint64_t k = 0; k < 4; ++k) {
        const noisy_antennas case_({}, 18 + 4 * double(k), seed + k);
        const front_end_frame f = case_.receive(config_on(backend()));
        const front_end_frame plain = case_.receive(config_on(backend(), false));
        EXPECT_FALSE(f.whitened) << "frame " << k;
        for (float s : f.antenna_scale)
            EXPECT_EQ(s, 1.0f);
        for (int r = 0; r < 4; ++r)
            EXPECT_NEAR(
                f.antenna_n0[size_t(r)], case_.true_n0(r), 0.2 * case_.true_n0(r));
        for (float n : plain.antenna_n0)
            EXPECT_EQ(n, plain.n0); // not measured: the frame's at each
        EXPECT_EQ(f.H, plain.H);
        EXPECT_EQ(f.y, plain.y);
        EXPECT_EQ(f.n0, plain.n0);
    }
}

TEST_P(antenna_noise, a_scaled_input_gives_the_same_whitening)
{
    const uint64_t seed = fresh_seed();
    noisy_antennas case_({ 0, 0, 9, 0 }, 20, seed);
    const front_end_frame f = case_.receive(config_on(backend()));
    for (float factor : { 1e-3f, 1e4f }) {
        for (cfloat& v : case_.frame->rx)
            v *= factor;
        const front_end_frame g = case_.receive(config_on(backend()));
        for (cfloat& v : case_.frame->rx)
            v /= factor;
        EXPECT_EQ(g.whitened, f.whitened);
        for (int r = 0; r < 4; ++r) {
            EXPECT_NEAR(g.antenna_scale[size_t(r)], f.antenna_scale[size_t(r)], 1e-4f);
            EXPECT_NEAR(g.antenna_n0[size_t(r)] / (factor * factor),
                        f.antenna_n0[size_t(r)],
                        1e-3f * f.antenna_n0[size_t(r)]);
        }
    }
}

TEST_P(antenna_noise, whitening_recovers_the_good_antennas_beside_a_noisy_one)
{
    // Two streams onto four antennas, one of them 12 dB noisier: with one N0
    // for all, MMSE trusts the noisy antenna as much as the others and takes
    // the mean noise for every one; whitened, it weighs each by its SNR. Over
    // four frames the whitened receiver makes at most two thirds of the raw bit
    // errors (a quarter to two fifths in 5 runs; a sync that sums the antennas
    // alike loses the preamble when one is ~20 dB noisier at low SNR).
    const uint64_t seed = fresh_seed();
    int whitened_errors = 0, plain_errors = 0;
    for (uint64_t k = 0; k < 4; ++k) {
        const noisy_antennas case_({ 0, 0, 0, 12 }, 14, seed + k, 2);
        const front_end_frame f = case_.receive(config_on(backend()));
        const front_end_frame plain = case_.receive(config_on(backend(), false));
        EXPECT_TRUE(f.whitened);
        whitened_errors += mmse_bit_errors(case_.g, f, *case_.frame);
        plain_errors += mmse_bit_errors(case_.g, plain, *case_.frame);
    }
    std::printf(
        "[ measured ] 2x4, antenna 3 at +12 dB, 14 dB: raw bit errors whitened %d, "
        "one N0 %d\n",
        whitened_errors,
        plain_errors);
    EXPECT_LT(3 * whitened_errors, 2 * plain_errors);
}

TEST_P(antenna_noise, each_antennas_comb_filter_smooths_as_its_own_noise_asks)
{
    // Three quiet antennas beside one 20 dB noisier: with the mean noise (26x
    // the quiet antennas') the LMMSE comb filter smooths the quiet antennas'
    // estimates as if they were 14 dB noisier. With each antenna's own noise
    // they come closer to the truth (x0.16-0.76 over 24 runs of 6 frames on
    // the H100, CPU and CUDA; x1.00 with one filter for all), and the noisy
    // one no further from it; with hold in time and with LMMSE in time (whose
    // filter takes each antenna's noise too).
    const uint64_t seed = fresh_seed();
    double on[4] = {}, off[4] = {};
    for (uint64_t k = 0; k < 10; ++k) {
        const time_interpolation time =
            k % 2 ? time_interpolation::lmmse : time_interpolation::hold;
        const noisy_antennas case_({ 0, 0, 0, 20 }, 26, seed + k);
        ofdm_receiver rx(case_.g, config_on(backend(), true, time));
        const sync_result s =
            rx.synchronize(case_.frame->rx.data(), case_.frame->rx_samples);
        ASSERT_TRUE(s.found && s.complete);
        const front_end_frame f = case_.receive(config_on(backend(), true, time));
        const front_end_frame plain = case_.receive(config_on(backend(), false, time));
        EXPECT_TRUE(f.whitened);
        for (int r = 0; r < 4; ++r) {
            on[r] += data_channel_mse(case_.g, *case_.ch, case_.mc, s, f, r);
            off[r] += data_channel_mse(case_.g, *case_.ch, case_.mc, s, plain, r);
        }
    }
    for (int r = 0; r < 4; ++r)
        std::printf("[ measured ] antenna %d (%s): channel MSE own noise %.3e, one N0 "
                    "%.3e (x%.2f)\n",
                    r,
                    r < 3 ? "quiet" : "+20 dB",
                    on[r] / 10,
                    off[r] / 10,
                    on[r] / off[r]);
    EXPECT_LT(on[0] + on[1] + on[2], 0.85 * (off[0] + off[1] + off[2]));
    EXPECT_LT(on[3], 1.25 * off[3]);
}

TEST_P(antenna_noise, the_genie_whitens_by_the_noise_it_is_given)
{
    const uint64_t seed = fresh_seed();
    const noisy_antennas case_({ 0, 10, 0, 0 }, 20, seed);
    ofdm_receiver rx(case_.g, config_on(backend()));
    const sync_result s = rx.synchronize(case_.frame->rx.data(), case_.frame->rx_samples);
    ASSERT_TRUE(s.found && s.complete);
    std::vector<cfloat> H(size_t(case_.g.used_subcarriers) * 4 * case_.g.nt,
                          cfloat(1, 0));
    const float n0[4] = { 1.0f, 10.0f, 1.0f, 1.0f };
    const front_end_frame f = rx.receive_known_channel(
        case_.frame->rx.data(), case_.frame->rx_samples, s, H.data(), 3.25f, n0);
    EXPECT_TRUE(f.whitened);
    EXPECT_FLOAT_EQ(f.antenna_scale[1], std::sqrt(0.325f));
    EXPECT_FLOAT_EQ(f.H[1 * size_t(case_.g.nt)].real(), std::sqrt(0.325f)); // row 1
    EXPECT_FLOAT_EQ(f.H[0].real(), std::sqrt(3.25f));
    const front_end_frame alike = rx.receive_known_channel(
        case_.frame->rx.data(), case_.frame->rx_samples, s, H.data(), 1.0f);
    EXPECT_FALSE(alike.whitened);
    for (float bad : { -1.0f, 0.0f, NAN }) {
        const float given[4] = { 1.0f, bad, 1.0f, 1.0f };
        EXPECT_THROW(rx.receive_known_channel(case_.frame->rx.data(),
                                              case_.frame->rx_samples,
                                              s,
                                              H.data(),
                                              1.0f,
                                              given),
                     std::invalid_argument)
            << bad;
    }
    ASSERT_GE(alike.H.size(), H.size());
    EXPECT_TRUE(std::equal(H.begin(), H.end(), alike.H.begin()));
}

INSTANTIATE_TEST_SUITE_P(backends, antenna_noise, ::testing::Values("cpu", "cuda"));

TEST(antenna_noise_cuda, cuda_equals_cpu_with_noisy_antennas)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    // Hold and LMMSE in time (whose weights are each antenna's own where whitened).
    for (const std::vector<double>& db : { std::vector<double>{ 0, 4, 8, 16 },
                                           std::vector<double>{ 0, 0, 0, 20 },
                                           std::vector<double>{},
                                           std::vector<double>{ 0, 0, 20, 0 } }) {
        const time_interpolation time = db.size() == 4 && db[2] == 20
                                            ? time_interpolation::lmmse
                                            : time_interpolation::hold;
        const noisy_antennas case_(db, 24, seed);
        const front_end_frame a = case_.receive(config_on("cpu", true, time));
        const front_end_frame b = case_.receive(config_on("cuda", true, time));
        EXPECT_EQ(a.whitened, b.whitened);
        for (int r = 0; r < 4; ++r)
            EXPECT_NEAR(a.antenna_n0[size_t(r)],
                        b.antenna_n0[size_t(r)],
                        1e-3f * a.antenna_n0[size_t(r)]);
        ASSERT_EQ(a.H.size(), b.H.size());
        ASSERT_EQ(a.y.size(), b.y.size());
        const double worst =
            std::max(worst_relative_difference(a.H.data(), b.H.data(), a.H.size()),
                     worst_relative_difference(a.y.data(), b.y.data(), a.y.size()));
        std::printf("[ measured ] antennas %s: CUDA against CPU, H and y to %.1e "
                    "(delay spread %.4g / %.4g samples, Doppler %.4g / %.4g Hz, N0 "
                    "%.4g / %.4g)\n",
                    db.empty()                          ? "alike"
                    : db[1] > 0                         ? "0/4/8/16 dB"
                    : time == time_interpolation::lmmse ? "0/0/20/0 dB, LMMSE in time"
                                                        : "0/0/0/20 dB",
                    worst,
                    a.delay_spread,
                    b.delay_spread,
                    a.doppler,
                    b.doppler,
                    a.n0,
                    b.n0);
        EXPECT_LT(worst, 1e-3);
    }
}
