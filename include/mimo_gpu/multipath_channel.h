// nt -> nr multipath channel for OFDM loopback tests and simulations: a tapped
// delay line per antenna pair (3GPP EPA / EVA / ETU, TS 36.101 Annex B.2, taps
// rounded to the sample grid), Rayleigh taps with optional exponential spatial
// correlation (Kronecker), carrier frequency offset, a timing offset of leading
// noise samples, and AWGN. Block fading: the taps hold for a call of run()
// (one frame) and are redrawn by the next. Seeded: the same seed gives the same
// taps and noise.
#pragma once

#include <mimo_gpu/ofdm_grid.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mimo_gpu {

enum class delay_profile { flat, epa, eva, etu };
/// "flat", "epa", "eva", "etu" (any case); anything else throws std::invalid_argument.
delay_profile delay_profile_from_string(const std::string& name);
std::string to_string(delay_profile p);

struct multipath_config {
    int nr = 2, nt = 2;
    delay_profile profile = delay_profile::epa;
    double sample_rate = 1.92e6; ///< Hz, places the taps on the sample grid
    double cfo = 0;              ///< carrier frequency offset in Hz
    int timing_offset = 0;       ///< noise-only samples before the signal (>= 0)
    /// Es/N0 per receive antenna and stream for unit-energy resource elements:
    /// the noise variance per complex sample is N0 = 10^(-snr_db / 10).
    double snr_db = 30;
    /// Exponential correlation between neighbouring transmit (alpha) and receive
    /// (beta) antennas, in [0, 1): 0 (independent), 0.3/0.9 (36.101 medium/high, beta 0.9).
    double tx_correlation = 0, rx_correlation = 0;
    uint64_t seed = 1;
};

class multipath_channel
{
public:
    /// Throws std::invalid_argument for bad fields.
    explicit multipath_channel(const multipath_config& config);
    const multipath_config& config() const { return m_config; }
    float noise_variance() const { return m_n0; }
    /// Changes the SNR from the next run() on (std::invalid_argument as the constructor).
    void set_snr_db(double snr_db);
    /// Samples past the input that the taps' delay spread adds.
    int delay_spread_samples() const { return m_delays.back(); }
    /// Output length for `samples` input samples: timing offset + input + spread.
    size_t output_samples(size_t samples) const;

    /// tx: samples * nt (antenna-interleaved); rx: output_samples(samples) * nr.
    /// Draws new taps, then convolves, rotates by the CFO (phase 0 at rx[0]) and adds noise.
    void run(const cfloat* tx, size_t samples, cfloat* rx);

    /// The current taps' frequency response at the grid's used subcarriers as a
    /// receiver sees it whose FFT window starts `window_delay` samples after
    /// the zero-delay path's symbol body (negative: earlier, into the cyclic
    /// prefix), without CFO: H[(i * nr + r) * nt + t], i the logical subcarrier.
    void frequency_response(const ofdm_grid& grid, double window_delay, cfloat* H) const;

private:
    void draw_taps();

    multipath_config m_config;
    float m_n0;
    std::vector<int> m_delays;     ///< tap delays in samples, ascending, first 0
    std::vector<float> m_gains;    ///< tap amplitude (sqrt of the power share)
    std::vector<cfloat> m_taps;    ///< per tap, nr x nt row-major
    std::vector<float> m_tx_chol, m_rx_chol; ///< Cholesky factors of the correlations
    std::mt19937_64 m_rng;
};

} // namespace mimo_gpu
