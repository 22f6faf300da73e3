// Seeded MIMO channel for simulations: i.i.d. Rayleigh H per problem plus AWGN.
#pragma once

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/types.h>

#include <random>

namespace mimo_gpu {

/// N0 for a given SNR in dB. SNR is Es/N0 per receive antenna per stream:
/// symbols have unit energy and E|h_rt|^2 = 1, so N0 = 10^(-snr_db/10).
/// Throws std::invalid_argument unless N0 and 1/N0 are finite and > 0 in float.
float noise_variance_from_snr_db(double snr_db);

/// Draws, per problem, H with i.i.d. CN(0,1) entries and n ~ CN(0, N0 I), and
/// computes y = H s + n from the mapped bits. The same seed gives the same stream.
class channel_simulator
{
public:
    channel_simulator(mimo_shape shape, modulation mod, uint64_t seed);

    const mimo_shape& shape() const { return m_shape; }
    const constellation& constel() const { return m_constellation; }
    int bits_per_problem() const { return m_shape.nt * m_constellation.bits_per_symbol(); }

    /// bits: batch * nt * Q bytes (0/1), stream t's bits at [t*Q, t*Q+Q).
    /// H: batch * nr * nt; y: batch * nr. Throws on n0 < 0 or non-finite n0.
    void run(const uint8_t* bits, size_t batch, float n0, cfloat* H, cfloat* y);

    /// Uniform random bits, from the same seeded generator.
    void random_bits(uint8_t* bits, size_t count);

private:
    mimo_shape m_shape;
    constellation m_constellation;
    std::mt19937_64 m_rng;
    std::normal_distribution<float> m_normal{0.0f, 1.0f};
    std::vector<cfloat> m_symbols;
};

} // namespace mimo_gpu
