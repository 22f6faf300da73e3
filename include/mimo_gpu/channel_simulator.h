// Seeded MIMO channel for simulations: i.i.d. Rayleigh H per channel (one
// problem, or S consecutive problems sharing it) plus AWGN.
#pragma once

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/types.h>

#include <random>

namespace mimo_gpu {

/// N0 for a given SNR in dB. SNR is Es/N0 per receive antenna per stream:
/// symbols have unit energy and E|h_rt|^2 = 1, so N0 = 10^(-snr_db/10).
/// Throws std::invalid_argument unless N0 and 1/N0 are finite and > 0 in float.
float noise_variance_from_snr_db(double snr_db);

/// Draws H with i.i.d. CN(0,1) entries, one per channel of S consecutive problems
/// (S = 1: one per problem; S > 1: block fading, e.g. the per-subcarrier channel of
/// a frame of S OFDM symbols), and n ~ CN(0, N0 I) per problem, and computes
/// y = H s + n from the mapped bits. The same seed gives the same stream; the
/// generator draws a channel's H, then the noise of its S problems in order, so
/// S = 1 is the per-problem stream of run(bits, batch, n0, H, y).
class channel_simulator
{
public:
    channel_simulator(mimo_shape shape, modulation mod, uint64_t seed);

    const mimo_shape& shape() const { return m_shape; }
    const constellation& constel() const { return m_constellation; }
    int bits_per_problem() const
    {
        return m_shape.nt * m_constellation.bits_per_symbol();
    }

    /// bits: batch * nt * Q bytes (0/1), stream t's bits at [t*Q, t*Q+Q).
    /// H: batch * nr * nt; y: batch * nr. Throws on n0 < 0 or non-finite n0.
    void run(const uint8_t* bits, size_t batch, float n0, cfloat* H, cfloat* y);

    /// Channel reuse: `channels` (C) matrices, each shared by S consecutive problems.
    /// bits: C * S * nt * Q bytes; H: C * nr * nt (one matrix per channel);
    /// y: C * S * nr (problem p = c*S + s uses H[c]). Throws on S < 1 and as run() does.
    void run(const uint8_t* bits,
             size_t channels,
             int symbols_per_channel,
             float n0,
             cfloat* H,
             cfloat* y);

    /// Uniform random bits, from the same seeded generator.
    void random_bits(uint8_t* bits, size_t count);

private:
    mimo_shape m_shape;
    constellation m_constellation;
    std::mt19937_64 m_rng;
    std::normal_distribution<float> m_normal{ 0.0f, 1.0f };
    std::vector<cfloat> m_symbols;
};

} // namespace mimo_gpu
