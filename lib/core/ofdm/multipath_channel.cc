// multipath_channel: tapped delay line per antenna pair, CFO, timing offset, AWGN.
#include <mimo_gpu/multipath_channel.h>

#include "../runtime/parallel_for.h"
#include "channel_sample.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

namespace mimo_gpu {

namespace {

struct tap {
    double delay_ns, power_db;
};

// TS 36.101 Table B.2.1-2/3/4.
const std::vector<tap>& profile_taps(delay_profile p)
{
    static const std::vector<tap> flat{ { 0, 0 } };
    static const std::vector<tap> epa{ { 0, 0 },      { 30, -1 },  { 70, -2 },
                                       { 90, -3 },    { 110, -8 }, { 190, -17.2 },
                                       { 410, -20.8 } };
    static const std::vector<tap> eva{ { 0, 0 },      { 30, -1.5 },  { 150, -1.4 },
                                       { 310, -3.6 }, { 370, -0.6 }, { 710, -9.1 },
                                       { 1090, -7 },  { 1730, -12 }, { 2510, -16.9 } };
    static const std::vector<tap> etu{ { 0, -1 },    { 50, -1 },   { 120, -1 },
                                       { 200, 0 },   { 230, 0 },   { 500, 0 },
                                       { 1600, -3 }, { 2300, -5 }, { 5000, -7 } };
    switch (p) {
    case delay_profile::flat:
        return flat;
    case delay_profile::epa:
        return epa;
    case delay_profile::eva:
        return eva;
    default:
        return etu;
    }
}

/// Lower Cholesky factor of the exponential correlation matrix R_ij = rho^|i-j|.
std::vector<float> correlation_cholesky(int n, double rho)
{
    std::vector<double> R(size_t(n) * n), L(size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            R[size_t(i) * n + j] = std::pow(rho, std::abs(i - j));
    for (int j = 0; j < n; ++j) {
        double d = R[size_t(j) * n + j];
        for (int k = 0; k < j; ++k)
            d -= L[size_t(j) * n + k] * L[size_t(j) * n + k];
        L[size_t(j) * n + j] = std::sqrt(d);
        for (int i = j + 1; i < n; ++i) {
            double v = R[size_t(i) * n + j];
            for (int k = 0; k < j; ++k)
                v -= L[size_t(i) * n + k] * L[size_t(j) * n + k];
            L[size_t(i) * n + j] = v / L[size_t(j) * n + j];
        }
    }
    return std::vector<float>(L.begin(), L.end());
}

void fail(const std::string& what)
{
    throw std::invalid_argument("mimo_gpu: multipath_channel: " + what);
}

/// Sinusoids per tap and antenna pair of the Doppler model: with random angles
/// of arrival the ensemble autocorrelation is J0 exactly; 32 make each tap
/// close to Gaussian.
constexpr int k_doppler_sinusoids = 32;
/// Largest phase step of a sinusoid between two snapshots of the taps: linear
/// interpolation between them is then within 0.05^2 / 8 (-70 dB) of the model.
constexpr double k_snapshot_phase_step = 0.05;

} // namespace

delay_profile delay_profile_from_string(const std::string& name)
{
    std::string n = name;
    for (auto& ch : n)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    static const std::map<std::string, delay_profile> known{
        { "flat", delay_profile::flat },
        { "epa", delay_profile::epa },
        { "eva", delay_profile::eva },
        { "etu", delay_profile::etu }
    };
    const auto it = known.find(n);
    if (it == known.end())
        throw std::invalid_argument("mimo_gpu: unknown delay profile '" + name +
                                    "' (known: flat, epa, eva, etu)");
    return it->second;
}

std::string to_string(delay_profile p)
{
    switch (p) {
    case delay_profile::flat:
        return "flat";
    case delay_profile::epa:
        return "epa";
    case delay_profile::eva:
        return "eva";
    default:
        return "etu";
    }
}

multipath_channel::multipath_channel(const multipath_config& config)
    : m_config(config), m_rng(config.seed)
{
    if (config.nr < 1 || config.nr > 256 || config.nt < 1 || config.nt > 256)
        fail("nr and nt must be in 1..256");
    if (!(config.sample_rate > 0) || !std::isfinite(config.sample_rate))
        fail("sample_rate must be finite and > 0");
    if (!std::isfinite(config.cfo) || std::abs(config.cfo) >= config.sample_rate / 2)
        fail("cfo must be finite and below half the sample rate");
    if (config.timing_offset < 0)
        fail("timing_offset must be >= 0");
    if (!std::isfinite(config.snr_db) || std::abs(config.snr_db) > 200)
        fail("snr_db must be finite, |snr_db| <= 200");
    if (!config.antenna_noise_db.empty() &&
        config.antenna_noise_db.size() != size_t(config.nr))
        fail("antenna_noise_db must hold nr = " + std::to_string(config.nr) +
             " values (or none), got " + std::to_string(config.antenna_noise_db.size()));
    for (double db : config.antenna_noise_db)
        if (!std::isfinite(db) || std::abs(db) > 100)
            fail("antenna_noise_db values must be finite, within +-100 dB");
    if (!(config.tx_correlation >= 0 && config.tx_correlation < 1) ||
        !(config.rx_correlation >= 0 && config.rx_correlation < 1))
        fail("correlations must be in [0, 1)");
    if (!(config.doppler >= 0 && config.doppler < config.sample_rate / 20))
        fail("doppler must be finite, >= 0 and below a 20th of the sample rate");
    m_n0 = float(std::pow(10.0, -config.snr_db / 10.0));
    // Taps on the sample grid: powers of taps that land on one sample add up.
    std::map<int, double> power;
    double total = 0;
    for (const tap& t : profile_taps(config.profile)) {
        const double p = std::pow(10.0, t.power_db / 10.0);
        power[int(std::lround(t.delay_ns * 1e-9 * config.sample_rate))] += p;
        total += p;
    }
    for (const auto& [d, p] : power) {
        m_delays.push_back(d);
        m_gains.push_back(float(std::sqrt(p / total)));
    }
    m_tx_chol = correlation_cholesky(config.nt, config.tx_correlation);
    m_rx_chol = correlation_cholesky(config.nr, config.rx_correlation);
    if (config.doppler == 0) {
        draw_taps();
        return;
    }
    const size_t count =
        m_delays.size() * size_t(config.nr) * size_t(config.nt) * k_doppler_sinusoids;
    std::uniform_real_distribution<double> angle(0.0, 2 * M_PI);
    m_sinusoid_rate.resize(count);
    m_sinusoid_phase.resize(count);
    for (size_t k = 0; k < count; ++k) {
        m_sinusoid_rate[k] = 2 * M_PI * config.doppler * std::cos(angle(m_rng));
        m_sinusoid_phase[k] = angle(m_rng);
    }
    // Clamped before the conversion: a tiny Doppler would overflow an int.
    m_snapshot_spacing =
        int(std::clamp(std::floor(k_snapshot_phase_step * config.sample_rate /
                                  (2 * M_PI * config.doppler)),
                       1.0,
                       double(1 << 24)));
    m_taps.resize(m_delays.size() * size_t(config.nr) * size_t(config.nt));
    fading_at(0.0, m_taps.data());
}

float multipath_channel::antenna_noise_variance(int r) const
{
    return m_config.antenna_noise_db.empty()
               ? m_n0
               : float(double(m_n0) *
                       std::pow(10.0, m_config.antenna_noise_db[size_t(r)] / 10.0));
}

void multipath_channel::set_snr_db(double snr_db)
{
    if (!std::isfinite(snr_db) || std::abs(snr_db) > 200)
        fail("snr_db must be finite, |snr_db| <= 200");
    m_config.snr_db = snr_db;
    m_n0 = float(std::pow(10.0, -snr_db / 10.0));
}

size_t multipath_channel::output_samples(size_t samples) const
{
    return size_t(m_config.timing_offset) + samples + size_t(delay_spread_samples());
}

void multipath_channel::draw_taps()
{
    std::normal_distribution<float> g(0.0f, float(M_SQRT1_2));
    std::vector<cfloat> G(m_delays.size() * size_t(m_config.nr) * size_t(m_config.nt));
    for (auto& v : G)
        v = cfloat(g(m_rng), g(m_rng));
    m_taps.resize(G.size());
    correlate(G.data(), m_taps.data());
}

void multipath_channel::correlate(const cfloat* G_all, cfloat* taps) const
{
    const int nr = m_config.nr, nt = m_config.nt;
    std::vector<cfloat> T(size_t(nr) * nt);
    for (size_t l = 0; l < m_delays.size(); ++l) {
        const cfloat* G = G_all + l * size_t(nr) * nt;
        // H_l = gain * L_rx G L_tx^T: E[vec H vec H^H] = R_tx (x) R_rx.
        for (int r = 0; r < nr; ++r)
            for (int t = 0; t < nt; ++t) {
                cfloat v(0, 0);
                for (int k = 0; k <= r; ++k)
                    v += m_rx_chol[size_t(r) * nr + k] * G[size_t(k) * nt + t];
                T[size_t(r) * nt + t] = v;
            }
        for (int r = 0; r < nr; ++r)
            for (int t = 0; t < nt; ++t) {
                cfloat v(0, 0);
                for (int k = 0; k <= t; ++k)
                    v += T[size_t(r) * nt + k] * m_tx_chol[size_t(t) * nt + k];
                taps[(l * nr + r) * nt + t] = v * m_gains[l];
            }
    }
}

void multipath_channel::fading_at(double seconds, cfloat* taps) const
{
    const size_t entries = m_delays.size() * size_t(m_config.nr) * size_t(m_config.nt);
    const double scale = 1.0 / std::sqrt(double(k_doppler_sinusoids));
    std::vector<cfloat> G(entries);
    for (size_t e = 0; e < entries; ++e) {
        std::complex<double> acc(0, 0);
        for (int k = 0; k < k_doppler_sinusoids; ++k) {
            const size_t i = e * k_doppler_sinusoids + size_t(k);
            acc += std::polar(
                1.0,
                std::fmod(m_sinusoid_rate[i] * seconds + m_sinusoid_phase[i], 2 * M_PI));
        }
        G[e] = cfloat(acc * scale);
    }
    correlate(G.data(), taps);
}

void multipath_channel::taps_at(double n, cfloat* taps) const
{
    const size_t entries = m_delays.size() * size_t(m_config.nr) * size_t(m_config.nt);
    const size_t snapshots = m_snapshots.size() / entries;
    const double U = m_snapshot_spacing;
    const double position =
        std::clamp((double(m_run_start) + n) / U - double(m_first_snapshot),
                   0.0,
                   double(snapshots - 1));
    const size_t k = std::min(size_t(position), snapshots > 1 ? snapshots - 2 : 0);
    const float w = float(position - double(k));
    const cfloat* a = &m_snapshots[k * entries];
    const cfloat* b = snapshots > 1 ? a + entries : a;
    for (size_t e = 0; e < entries; ++e)
        taps[e] = a[e] + w * (b[e] - a[e]);
}

multipath_run multipath_channel::prepare_run(size_t samples)
{
    multipath_run run;
    run.samples = samples;
    run.index = m_runs++;
    if (m_config.doppler > 0) {
        advance_fading(samples);
        run.taps = m_snapshots.data();
        run.tap_values = m_snapshots.size();
        run.moving = true;
        run.start = m_run_start;
        run.first_snapshot = m_first_snapshot;
        run.snapshots = m_snapshots.size() / m_taps.size();
        run.snapshot_spacing = m_snapshot_spacing;
    } else {
        draw_taps();
        run.taps = m_taps.data();
        run.tap_values = m_taps.size();
    }
    return run;
}

void multipath_channel::run(const cfloat* tx, size_t samples, cfloat* rx)
{
    const multipath_run plan = prepare_run(samples);
    const detail::channel_run c = detail::make_channel_run(*this, plan);
    const int nr = m_config.nr, nt = m_config.nt;
    // Antenna-interleaved: sample n of antenna t at n * nt + t.
    std::vector<const float*> in(static_cast<size_t>(nt));
    std::vector<float*> out(static_cast<size_t>(nr));
    for (int t = 0; t < nt; ++t)
        in[size_t(t)] = reinterpret_cast<const float*>(tx + t);
    for (int r = 0; r < nr; ++r)
        out[size_t(r)] = reinterpret_cast<float*>(rx + r);
    const float* taps = reinterpret_cast<const float*>(plan.taps);
    detail::parallel_for(
        size_t(c.output_samples()), 16384, [&](size_t begin, size_t end) {
            for (size_t m = begin; m < end; ++m)
                detail::channel_output_sample(
                    c, in.data(), size_t(nt), taps, m, out.data(), size_t(nr));
        });
}

void multipath_channel::advance_fading(size_t samples)
{
    const size_t entries = m_taps.size();
    const uint64_t U = uint64_t(m_snapshot_spacing);
    m_run_start = m_next_sample;
    m_next_sample += samples;
    // Snapshots on the absolute grid around [m_run_start, m_next_sample).
    m_first_snapshot = m_run_start / U;
    const uint64_t last = samples ? (m_next_sample - 1) / U + 1 : m_first_snapshot;
    const size_t count = size_t(last - m_first_snapshot + 1);
    m_snapshots.resize(count * entries);
    // Each snapshot on its own (a sum of sinusoids per tap and pair: ~4 ms a
    // frame on one core at NR 100 MHz 4x4 ETU 300 Hz), over the cores.
    detail::parallel_for(count, 8, [&](size_t begin, size_t end) {
        for (size_t k = begin; k < end; ++k)
            fading_at(double((m_first_snapshot + k) * U) / m_config.sample_rate,
                      &m_snapshots[k * entries]);
    });
    taps_at(0, m_taps.data());
}

void multipath_channel::frequency_response(const ofdm_grid& grid,
                                           double window_delay,
                                           cfloat* H,
                                           double at_sample) const
{
    if (!std::isfinite(at_sample))
        fail("frequency_response: at_sample must be finite");
    const int nr = m_config.nr, nt = m_config.nt, U = grid.used_subcarriers;
    std::vector<cfloat> moving;
    if (m_config.doppler > 0 && !m_snapshots.empty()) {
        moving.resize(m_taps.size());
        taps_at(at_sample, moving.data());
    }
    const std::vector<cfloat>& taps = moving.empty() ? m_taps : moving;
    for (int i = 0; i < U; ++i) {
        const double k = grid.offset(i);
        for (int r = 0; r < nr; ++r)
            for (int t = 0; t < nt; ++t) {
                std::complex<double> acc(0, 0);
                for (size_t l = 0; l < m_delays.size(); ++l) {
                    const double ph =
                        -2 * M_PI * k * (m_delays[l] - window_delay) / grid.fft_size;
                    acc += std::complex<double>(taps[(l * nr + r) * nt + t]) *
                           std::polar(1.0, ph);
                }
                H[(size_t(i) * nr + r) * nt + t] = cfloat(acc);
            }
    }
}

} // namespace mimo_gpu
