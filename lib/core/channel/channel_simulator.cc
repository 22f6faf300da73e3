#include <mimo_gpu/channel_simulator.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

float noise_variance_from_snr_db(double snr_db)
{
    if (!std::isfinite(snr_db))
        throw std::invalid_argument("mimo_gpu: SNR must be finite, got " +
                                    std::to_string(snr_db));
    const float n0 = float(std::pow(10.0, -snr_db / 10.0));
    // Checked in float, where it is used: beyond about +-379 dB N0 or 1/N0 is not finite.
    if (!(n0 > 0.0f) || !std::isfinite(n0) || !std::isfinite(1.0f / n0))
        throw std::invalid_argument(
            "mimo_gpu: SNR " + std::to_string(snr_db) +
            " dB gives N0 = 10^(-SNR/10) outside single precision "
            "(SNR must be within about -380..379 dB)");
    return n0;
}

channel_simulator::channel_simulator(mimo_shape shape, modulation mod, uint64_t seed)
    : m_shape(shape), m_constellation(mod), m_rng(seed)
{
    m_shape.validate();
}

void channel_simulator::random_bits(uint8_t* bits, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        bits[i] = uint8_t(m_rng() >> 63);
}

void channel_simulator::run(
    const uint8_t* bits, size_t batch, float n0, cfloat* H, cfloat* y)
{
    run(bits, batch, 1, n0, H, y);
}

void channel_simulator::run(const uint8_t* bits,
                            size_t channels,
                            int symbols_per_channel,
                            float n0,
                            cfloat* H,
                            cfloat* y)
{
    if (!(n0 >= 0.0f) || !std::isfinite(n0))
        throw std::invalid_argument(
            "mimo_gpu::channel_simulator: noise variance must be finite and >= 0, got " +
            std::to_string(n0));
    if (symbols_per_channel < 1)
        throw std::invalid_argument(
            "mimo_gpu::channel_simulator: symbols per channel must be >= 1, got " +
            std::to_string(symbols_per_channel));
    const int nr = m_shape.nr, nt = m_shape.nt;
    const size_t S = size_t(symbols_per_channel);
    m_symbols.resize(size_t(nt));
    // CN(0, v): real and imaginary parts each N(0, v/2).
    const float h_sigma = std::sqrt(0.5f), n_sigma = std::sqrt(0.5f * n0);
    for (size_t c = 0; c < channels; ++c) {
        cfloat* h = H + c * nr * nt;
        for (int i = 0; i < nr * nt; ++i) {
            const float re = m_normal(m_rng), im = m_normal(m_rng);
            h[i] = cfloat(h_sigma * re, h_sigma * im);
        }
        for (size_t s = 0; s < S; ++s) {
            const size_t p = c * S + s;
            m_constellation.map(
                bits + p * bits_per_problem(), m_symbols.data(), size_t(nt));
            for (int r = 0; r < nr; ++r) {
                cfloat acc(0.0f, 0.0f);
                for (int t = 0; t < nt; ++t)
                    acc += h[r * nt + t] * m_symbols[t];
                const float re = m_normal(m_rng), im = m_normal(m_rng);
                y[p * nr + r] = acc + cfloat(n_sigma * re, n_sigma * im);
            }
        }
    }
}

} // namespace mimo_gpu
