#include "test_support.h"

#include <mimo_gpu/channel_simulator.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

TEST(channel_simulator, same_seed_same_stream_other_seed_other_stream)
{
    const uint64_t seed = fresh_seed();
    problem_batch a({ 4, 2 }, modulation::qam16, 50, 10.0, seed),
        b({ 4, 2 }, modulation::qam16, 50, 10.0, seed),
        c({ 4, 2 }, modulation::qam16, 50, 10.0, seed + 1);
    EXPECT_EQ(a.H, b.H);
    EXPECT_EQ(a.y, b.y);
    EXPECT_NE(a.H, c.H);
}

TEST(channel_simulator, statistics_follow_the_model)
{
    const mimo_shape shape{ 4, 4 };
    const size_t batch = 20000;
    channel_simulator sim(shape, modulation::qpsk, fresh_seed());
    const float n0 = noise_variance_from_snr_db(3.0);
    std::vector<uint8_t> bits(batch * sim.bits_per_problem());
    sim.random_bits(bits.data(), bits.size());
    std::vector<cfloat> H(batch * 16), y(batch * 4), s(4);
    sim.run(bits.data(), batch, n0, H.data(), y.data());
    double h_power = 0, noise_power = 0;
    for (size_t p = 0; p < batch; ++p) {
        sim.constel().map(bits.data() + p * 8, s.data(), 4);
        for (int r = 0; r < 4; ++r) {
            cfloat hs = 0;
            for (int t = 0; t < 4; ++t) {
                hs += H[p * 16 + r * 4 + t] * s[t];
                h_power += std::norm(H[p * 16 + r * 4 + t]);
            }
            noise_power += std::norm(y[p * 4 + r] - hs);
        }
    }
    EXPECT_NEAR(h_power / (batch * 16), 1.0, 0.02);
    EXPECT_NEAR(noise_power / (batch * 4) / n0, 1.0, 0.03);
}

// S = 1 is the per-problem stream as it always was (recorded results depend on
// it): per problem, nr*nt CN(0,1) entries of H, then the noise of each row, from
// one mt19937_64 through std::normal_distribution<float>.
TEST(channel_simulator, one_symbol_per_channel_is_the_per_problem_stream)
{
    const mimo_shape shape{ 3, 2 };
    const size_t batch = 40;
    const uint64_t seed = fresh_seed();
    const float n0 = noise_variance_from_snr_db(7.0);
    channel_simulator sim(shape, modulation::qam16, seed),
        again(shape, modulation::qam16, seed);
    std::vector<uint8_t> bits(batch * sim.bits_per_problem());
    for (size_t i = 0; i < bits.size(); ++i)
        bits[i] = uint8_t((i * 7 + i / 5) & 1);
    std::vector<cfloat> H(batch * 6), y(batch * 3), H1(H.size()), y1(y.size());
    sim.run(bits.data(), batch, n0, H.data(), y.data());
    again.run(bits.data(), batch, 1, n0, H1.data(), y1.data());
    EXPECT_EQ(H, H1);
    EXPECT_EQ(y, y1);

    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const float h_sigma = std::sqrt(0.5f), n_sigma = std::sqrt(0.5f * n0);
    std::vector<cfloat> s(2);
    for (size_t p = 0; p < batch; ++p) {
        for (int i = 0; i < 6; ++i) {
            const float re = normal(rng), im = normal(rng);
            ASSERT_EQ(H[p * 6 + i], cfloat(h_sigma * re, h_sigma * im)) << p;
        }
        sim.constel().map(bits.data() + p * 8, s.data(), 2);
        for (int r = 0; r < 3; ++r) {
            cfloat acc(0.0f, 0.0f);
            for (int t = 0; t < 2; ++t)
                acc += H[p * 6 + r * 2 + t] * s[t];
            const float re = normal(rng), im = normal(rng);
            ASSERT_EQ(y[p * 3 + r], acc + cfloat(n_sigma * re, n_sigma * im)) << p;
        }
    }
}

// Channel reuse: C matrices, S problems each; y of problem c*S + s is H[c] s + n.
TEST(channel_simulator, symbols_share_one_channel_matrix)
{
    const mimo_shape shape{ 32, 8 };
    const size_t C = 50;
    const int S = 7;
    const uint64_t seed = fresh_seed();
    channel_simulator sim(shape, modulation::qpsk, seed);
    const float n0 = noise_variance_from_snr_db(10.0);
    std::vector<uint8_t> bits(C * S * sim.bits_per_problem());
    sim.random_bits(bits.data(), bits.size());
    std::vector<cfloat> H(C * 32 * 8), y(C * S * 32), s(8);
    sim.run(bits.data(), C, S, n0, H.data(), y.data());
    double h_power = 0, noise_power = 0;
    for (size_t c = 0; c < C; ++c) {
        for (int i = 0; i < 32 * 8; ++i)
            h_power += std::norm(H[c * 256 + i]);
        for (int k = 0; k < S; ++k) {
            const size_t p = c * S + k;
            sim.constel().map(bits.data() + p * 16, s.data(), 8);
            for (int r = 0; r < 32; ++r) {
                cfloat hs = 0;
                for (int t = 0; t < 8; ++t)
                    hs += H[c * 256 + r * 8 + t] * s[t];
                noise_power += std::norm(y[p * 32 + r] - hs);
            }
        }
    }
    EXPECT_NEAR(h_power / (C * 256), 1.0, 0.03);
    EXPECT_NEAR(noise_power / (C * S * 32) / n0, 1.0, 0.03);
    // The first channel's matrix is the first draw, whatever S is.
    channel_simulator single(shape, modulation::qpsk, seed);
    std::vector<uint8_t> more(bits.size());
    single.random_bits(more.data(), more.size());
    std::vector<cfloat> H1(256), y1(32);
    single.run(bits.data(), 1, 1, n0, H1.data(), y1.data());
    EXPECT_TRUE(std::equal(H1.begin(), H1.end(), H.begin()));
}

TEST(channel_simulator, bad_input_is_rejected)
{
    EXPECT_THROW(channel_simulator({ 2, 3 }, modulation::qpsk, 1), std::invalid_argument);
    EXPECT_THROW(channel_simulator({ 2000, 2 }, modulation::qpsk, 1),
                 std::invalid_argument);
    // Large shapes are the large-MIMO detectors' business: the simulator takes them.
    EXPECT_NO_THROW(channel_simulator({ 64, 16 }, modulation::qpsk, 1));
    channel_simulator sim({ 2, 2 }, modulation::qpsk, 1);
    uint8_t bits[4] = { 0, 1, 1, 0 };
    cfloat H[4], y[2];
    EXPECT_THROW(sim.run(bits, 1, -1.0f, H, y), std::invalid_argument);
    EXPECT_THROW(sim.run(bits, 1, NAN, H, y), std::invalid_argument);
    EXPECT_THROW(sim.run(bits, 1, 0, 0.1f, H, y), std::invalid_argument); // S = 0
    EXPECT_THROW(noise_variance_from_snr_db(INFINITY), std::invalid_argument);
}
