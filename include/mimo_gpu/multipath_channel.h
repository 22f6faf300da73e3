// nt -> nr multipath channel for OFDM loopback tests and simulations: a tapped
// delay line per antenna pair (3GPP EPA / EVA / ETU, TS 36.101 Annex B.2, taps
// rounded to the sample grid), Rayleigh taps with optional exponential spatial
// correlation (Kronecker), carrier frequency offset, a timing offset of leading
// noise samples, and AWGN. Fading is either block fading (doppler = 0: the taps
// hold for a call of run(), one frame, and are redrawn by the next) or
// continuous Rayleigh fading with the Clarke/Jakes Doppler spectrum (doppler >
// 0, as the 36.101 "EPA 5 Hz", "EVA 70 Hz", "ETU 300 Hz" models): each tap of
// each antenna pair is a sum of sinusoids with random angles of arrival and
// phases, whose time runs on over the input samples of successive run() calls,
// so a frame fades within itself and into the next. Seeded: the same seed
// gives the same taps and noise. The noise is counter-based (Philox: sample m
// of run k has the same noise however the work is split), so the CUDA channel
// (cuda_multipath_channel.h) gives the same samples to rounding.
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
    /// Per receive antenna, its noise power relative to N0 in dB (radio chains
    /// with different noise figures or gains); empty: 0 dB at every antenna.
    /// nr values, each finite and within +-100 dB.
    std::vector<double> antenna_noise_db;
    /// Exponential correlation between neighbouring transmit (alpha) and receive
    /// (beta) antennas, in [0, 1): 0 (independent), 0.3/0.9 (36.101 medium/high, beta
    /// 0.9).
    double tx_correlation = 0, rx_correlation = 0;
    /// Maximum Doppler frequency in Hz, in [0, sample_rate / 20): 0 is block
    /// fading; above, continuous fading whose autocorrelation is J0(2 pi fd tau).
    double doppler = 0;
    uint64_t seed = 1;
};

/// What one run() applies, for the engines that apply it (run() on the CPU,
/// cuda_multipath_channel): the taps drawn for it (block fading) or the
/// fading's snapshots around it (Doppler).
struct multipath_run {
    size_t samples = 0;           ///< input samples
    uint64_t index = 0;           ///< runs before it (the noise's counter)
    const cfloat* taps = nullptr; ///< taps: per tap nr x nt; moving: per snapshot
    size_t tap_values = 0;
    bool moving = false; ///< Doppler
    uint64_t start = 0;  ///< moving: absolute input sample of its first
    uint64_t first_snapshot = 0, snapshots = 0;
    int snapshot_spacing = 1; ///< input samples between snapshots
};

class multipath_channel
{
public:
    /// Throws std::invalid_argument for bad fields.
    explicit multipath_channel(const multipath_config& config);
    const multipath_config& config() const { return m_config; }
    float noise_variance() const { return m_n0; }
    /// Receive antenna r's noise variance: N0 times its antenna_noise_db.
    float antenna_noise_variance(int r) const;
    /// Changes the SNR from the next run() on (std::invalid_argument as the constructor).
    void set_snr_db(double snr_db);
    /// Samples past the input that the taps' delay spread adds.
    int delay_spread_samples() const { return m_delays.back(); }
    /// Output length for `samples` input samples: timing offset + input + spread.
    size_t output_samples(size_t samples) const;

    /// tx: samples * nt (antenna-interleaved); rx: output_samples(samples) * nr.
    /// Block fading draws new taps; with Doppler the taps move on, each input
    /// sample meeting the taps of its own time. Then convolves, rotates by the
    /// CFO (phase 0 at rx[0]) and adds noise.
    void run(const cfloat* tx, size_t samples, cfloat* rx);

    /// What run() does before it applies the taps: draws them (block fading)
    /// or moves the fading on over `samples` input samples; says what the run
    /// applies (valid until the next call). For another engine that applies it.
    multipath_run prepare_run(size_t samples);
    const std::vector<int>& tap_delays() const { return m_delays; }

    /// The taps' frequency response at the grid's used subcarriers as a
    /// receiver sees it whose FFT window starts `window_delay` samples after
    /// the zero-delay path's symbol body (negative: earlier, into the cyclic
    /// prefix), without CFO: H[(i * nr + r) * nt + t], i the logical subcarrier.
    /// The taps are those met by input sample `at_sample` of the last run()
    /// (with block fading the same for every sample).
    void frequency_response(const ofdm_grid& grid,
                            double window_delay,
                            cfloat* H,
                            double at_sample = 0) const;

private:
    void draw_taps();
    /// Doppler: the unit-power fading of every tap and pair at time `seconds`,
    /// spatially correlated and scaled by the tap gains, into taps.
    void fading_at(double seconds, cfloat* taps) const;
    /// Doppler: the taps met by input sample n of the last run() (linear
    /// between the snapshots around it).
    void taps_at(double n, cfloat* taps) const;
    /// Doppler: advances time over `samples` input samples and takes the snapshots.
    void advance_fading(size_t samples);
    /// H_l = gain_l * L_rx G_l L_tx^T for every tap l, G of unit-power entries.
    void correlate(const cfloat* G, cfloat* taps) const;

    multipath_config m_config;
    float m_n0;
    std::vector<int> m_delays;  ///< tap delays in samples, ascending, first 0
    std::vector<float> m_gains; ///< tap amplitude (sqrt of the power share)
    std::vector<cfloat> m_taps; ///< per tap, nr x nt row-major
    std::vector<float> m_tx_chol, m_rx_chol; ///< Cholesky factors of the correlations
    std::mt19937_64 m_rng; ///< taps and fading (the noise is counter-based)
    uint64_t m_runs = 0;
    // Doppler: per tap, pair and sinusoid, its angular frequency 2 pi fd cos(angle
    // of arrival) in rad/s and its phase. Time counts input samples over all
    // runs; snapshots of the taps are taken at multiples of m_snapshot_spacing
    // samples (on an absolute grid, so splitting a stream into runs changes
    // nothing); the last run's span from snapshot m_first_snapshot on.
    std::vector<double> m_sinusoid_rate, m_sinusoid_phase;
    uint64_t m_next_sample = 0, m_run_start = 0, m_first_snapshot = 0;
    int m_snapshot_spacing = 1;
    std::vector<cfloat> m_snapshots;
};

} // namespace mimo_gpu
