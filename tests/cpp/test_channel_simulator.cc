#include "test_support.h"

#include <mimo_gpu/channel_simulator.h>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

TEST(channel_simulator, same_seed_same_stream_other_seed_other_stream)
{
    const uint64_t seed = fresh_seed();
    problem_batch a({4, 2}, modulation::qam16, 50, 10.0, seed), b({4, 2}, modulation::qam16, 50, 10.0, seed),
        c({4, 2}, modulation::qam16, 50, 10.0, seed + 1);
    EXPECT_EQ(a.H, b.H);
    EXPECT_EQ(a.y, b.y);
    EXPECT_NE(a.H, c.H);
}

TEST(channel_simulator, statistics_follow_the_model)
{
    const mimo_shape shape{4, 4};
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

TEST(channel_simulator, bad_input_is_rejected)
{
    EXPECT_THROW(channel_simulator({2, 3}, modulation::qpsk, 1), std::invalid_argument);
    EXPECT_THROW(channel_simulator({2000, 2}, modulation::qpsk, 1), std::invalid_argument);
    // Large shapes are the large-MIMO detectors' business: the simulator takes them.
    EXPECT_NO_THROW(channel_simulator({64, 16}, modulation::qpsk, 1));
    channel_simulator sim({2, 2}, modulation::qpsk, 1);
    uint8_t bits[4] = {0, 1, 1, 0};
    cfloat H[4], y[2];
    EXPECT_THROW(sim.run(bits, 1, -1.0f, H, y), std::invalid_argument);
    EXPECT_THROW(sim.run(bits, 1, NAN, H, y), std::invalid_argument);
    EXPECT_THROW(noise_variance_from_snr_db(INFINITY), std::invalid_argument);
}
