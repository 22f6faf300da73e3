// ofdm_transmitter: fills each antenna's bins per OFDM symbol, inverse FFT
// (unitary), cyclic prefix, antenna-interleaved output.
#include <mimo_gpu/ofdm_transmitter.h>

#include "fftw_plan.h"
#include "pilot_layout.h"

#include <algorithm>
#include <cmath>

namespace mimo_gpu {

ofdm_transmitter::ofdm_transmitter(const ofdm_grid& grid)
    : m_grid((grid.validate(), grid)),
      m_constellation(grid.mod),
      m_ifft(std::make_unique<detail::fftw_plan_1d>(
          grid.fft_size, detail::fftw_plan_1d::direction::inverse)),
      m_bins(size_t(grid.fft_size)),
      m_time(size_t(grid.fft_size))
{
}

ofdm_transmitter::~ofdm_transmitter() = default;

void ofdm_transmitter::map(const uint8_t* bits, cfloat* symbols) const
{
    m_constellation.map(bits, symbols, m_grid.data_elements() * size_t(m_grid.nt));
}

void ofdm_transmitter::modulate(const uint8_t* bits, cfloat* samples)
{
    const ofdm_grid& g = m_grid;
    const int N = g.fft_size, CP = g.cp_length, U = g.used_subcarriers,
              D = g.data_symbols, nt = g.nt;
    m_symbols.resize(g.data_elements() * size_t(nt));
    map(bits, m_symbols.data());
    const float pilot_gain = std::sqrt(float(nt));
    size_t at = 0; // sample index of the current symbol's CP
    // One OFDM symbol of antenna t from its bins, with its cyclic prefix.
    auto emit = [&](int t) {
        m_ifft->run(m_bins.data(), m_time.data());
        for (int n = 0; n < CP; ++n)
            samples[(at + size_t(n)) * nt + t] = m_time[size_t(N - CP + n)];
        for (int n = 0; n < N; ++n)
            samples[(at + size_t(CP + n)) * nt + t] = m_time[size_t(n)];
    };
    for (int t = 0; t < nt; ++t) {
        std::fill(m_bins.begin(), m_bins.end(), cfloat(0, 0));
        for (int i = 0; i < U; ++i)
            if (g.preamble_antenna(i) == t)
                m_bins[size_t(g.bin(i))] = g.preamble(i);
        emit(t);
    }
    at += size_t(g.symbol_samples());
    const detail::slot_layout layout = detail::layout_of(g);
    for (int j = 0; j < g.slots; ++j)
        for (int k = 0; k < layout.L; ++k) {
            const int role = layout.role(k); // data symbol s, or pilot p as -1 - p
            for (int t = 0; t < nt; ++t) {
                std::fill(m_bins.begin(), m_bins.end(), cfloat(0, 0));
                if (role < 0)
                    for (int i = t; i < U; i += nt)
                        m_bins[size_t(g.bin(i))] =
                            g.pilot(j * layout.P - 1 - role, i) * pilot_gain;
                else
                    for (int c = 0; c < U; ++c) {
                        const size_t e = (size_t(j) * U + size_t(c)) * D + size_t(role);
                        m_bins[size_t(g.bin(c))] = m_symbols[e * nt + t];
                    }
                emit(t);
            }
            at += size_t(g.symbol_samples());
        }
}

} // namespace mimo_gpu
