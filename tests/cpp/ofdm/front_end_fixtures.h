// What the front end's tests share: a small grid, receiver settings, an EPA
// channel, one frame or a train of frames through transmitter and channel, and
// the error of a frame's channels against the truth.
#pragma once

#include "../test_support.h"

#include <mimo_gpu/detector.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <cmath>
#include <vector>

namespace mimo_gpu_test {

using namespace mimo_gpu;

inline ofdm_grid small_grid(int nt, modulation mod = modulation::qam16)
{
    ofdm_grid g = ofdm_grid::preset("lte1.4");
    g.nt = nt;
    g.mod = mod;
    g.slots = 2;
    g.data_symbols = 6;
    return g;
}

/// NR 20 MHz (30 kHz, DC used), 4 streams, 2 slots of D data symbols.
inline ofdm_grid nr20_grid(int data_symbols)
{
    ofdm_grid g = ofdm_grid::preset("nr20");
    g.nt = 4;
    g.slots = 2;
    g.data_symbols = data_symbols;
    return g;
}

inline ofdm_receiver_config
receiver_config(int nr,
                time_interpolation ti = time_interpolation::hold,
                backend b = backend::automatic,
                frequency_interpolation fi = frequency_interpolation::lmmse)
{
    ofdm_receiver_config c;
    c.nr = nr;
    c.interpolation = ti;
    c.requested = b;
    c.frequency = fi;
    return c;
}

/// EPA from the grid's nt streams onto nr antennas, with a CFO of a tenth of a
/// subcarrier spacing and 61 samples of noise before each frame.
inline multipath_config
epa_channel(const ofdm_grid& g, int nr, double snr_db, uint64_t seed)
{
    multipath_config mc;
    mc.nr = nr;
    mc.nt = g.nt;
    mc.profile = delay_profile::epa;
    mc.sample_rate = g.sample_rate;
    mc.cfo = 0.1 * g.subcarrier_spacing();
    mc.timing_offset = 61;
    mc.snr_db = snr_db;
    mc.seed = seed;
    return mc;
}

/// One frame through transmitter and channel; rx and its length.
struct loopback {
    std::vector<uint8_t> bits;
    std::vector<cfloat> tx, rx;
    size_t rx_samples = 0;
    /// tail: samples of silence after the channel's output, as a stream has after a
    /// frame.
    loopback(ofdm_transmitter& t,
             multipath_channel& ch,
             uint64_t seed,
             const std::vector<uint8_t>* given = nullptr,
             size_t tail = 0)
    {
        const ofdm_grid& g = t.grid();
        bits = given ? *given : random_bits(g.frame_bits(), seed);
        tx.resize(size_t(g.frame_samples()) * g.nt);
        t.modulate(bits.data(), tx.data());
        rx_samples = ch.output_samples(size_t(g.frame_samples())) + tail;
        rx.assign(rx_samples * size_t(ch.config().nr), cfloat(0, 0));
        ch.run(tx.data(), size_t(g.frame_samples()), rx.data());
    }
};

/// A received frame as a detector takes it.
inline detector_input detector_input_of(const front_end_frame& f)
{
    detector_input in;
    in.H = f.H.data();
    in.y = f.y.data();
    in.channels = f.channels;
    in.symbols_per_channel = f.symbols_per_channel;
    in.n0 = f.n0;
    return in;
}

inline double mean_squared_error(const std::vector<cfloat>& a,
                                 const std::vector<cfloat>& b)
{
    double e = 0;
    for (size_t i = 0; i < a.size(); ++i)
        e += std::norm(a[i] - b[i]);
    return e / double(a.size());
}


/// Several frames back to back in one buffer (each through its own channel
/// draw), and their syncs found one after another.
struct frame_train {
    std::vector<cfloat> rx;
    size_t samples = 0;
    std::vector<sync_result> syncs;
    frame_train(
        const ofdm_grid& g, int nr, int frames, uint64_t seed, ofdm_receiver& rx_finder)
    {
        ofdm_transmitter tx(g);
        multipath_config mc = epa_channel(g, nr, 25, seed);
        mc.profile = delay_profile::eva;
        mc.cfo = 0.21 * g.subcarrier_spacing();
        mc.timing_offset = 40;
        multipath_channel ch(mc);
        for (int f = 0; f < frames; ++f) {
            loopback lb(tx, ch, seed + uint64_t(f));
            rx.insert(rx.end(), lb.rx.begin(), lb.rx.end());
        }
        samples = rx.size() / size_t(nr);
        size_t from = 0;
        for (int f = 0; f < frames; ++f) {
            const sync_result s = rx_finder.synchronize(rx.data(), samples, from);
            if (!s.found || !s.complete)
                break;
            syncs.push_back(s);
            from = s.frame_start + size_t(g.frame_samples()) - size_t(g.cp_length);
        }
    }
};

/// Element `index` of a frame's H as estimated: a whitened frame's H rows
/// carry each antenna's scale (front_end_frame::antenna_scale), taken out.
inline cfloat estimated_channel(const front_end_frame& f, size_t index, int nt)
{
    const size_t nr = f.antenna_scale.size();
    return nr ? f.H[index] / f.antenna_scale[index / size_t(nt) % nr] : f.H[index];
}

/// The largest |a - b| / max(1, |a|) over n elements (one engine's H or y
/// against another's).
inline double worst_relative_difference(const cfloat* a, const cfloat* b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; ++i)
        worst = std::max<double>(worst,
                                 std::abs(a[i] - b[i]) / std::max(1.0f, std::abs(a[i])));
    return worst;
}

/// The genie's synchronisation: the frame's true timing (the receiver's
/// window `backoff` samples into the cyclic prefix) and CFO.
inline sync_result genie_sync(const ofdm_grid& g, const multipath_config& mc, int backoff)
{
    sync_result s;
    s.found = s.complete = true;
    s.frame_start = size_t(mc.timing_offset + g.cp_length - backoff);
    s.cfo = float(mc.cfo / g.subcarrier_spacing());
    return s;
}

/// Every data symbol's true channel in receive_known_channels' layout, taken
/// `offset` samples after the symbol's start (its cyclic prefix's), with the
/// phase the CFO has turned by the genie's frame start.
inline std::vector<cfloat> true_data_symbol_channels(const ofdm_grid& g,
                                                     const multipath_channel& ch,
                                                     int backoff,
                                                     const sync_result& genie,
                                                     double offset)
{
    const int D = g.data_symbols;
    const size_t per_symbol = size_t(g.used_subcarriers) * ch.config().nr * g.nt;
    std::vector<cfloat> H(size_t(g.slots) * D * per_symbol);
    const cfloat phase = std::polar(
        1.0f, float(2 * M_PI * genie.cfo * double(genie.frame_start) / g.fft_size));
    for (int j = 0; j < g.slots; ++j)
        for (int d = 0; d < D; ++d) {
            cfloat* out = &H[(size_t(j) * D + d) * per_symbol];
            ch.frequency_response(g,
                                  -backoff,
                                  out,
                                  double(g.data_symbol(j, d)) * g.symbol_samples() +
                                      offset);
            for (size_t e = 0; e < per_symbol; ++e)
                out[e] *= phase;
        }
    return H;
}

/// The mean |error|^2 of a frame's H at every data resource element against
/// the true response at each data symbol's time (the phase the receiver's CFO
/// correction leaves taken in); antenna >= 0: of that receive antenna's row only.
/// frame_offset: where the frame's first sample was in the channel's last
/// run() (frames back to back through one run).
inline double data_channel_mse(const ofdm_grid& g,
                               const multipath_channel& ch,
                               const multipath_config& mc,
                               const sync_result& s,
                               const front_end_frame& fr,
                               int antenna = -1,
                               double frame_offset = 0)
{
    const int nt = g.nt, U = g.used_subcarriers, D = g.data_symbols;
    const size_t hn = size_t(mc.nr) * nt;
    std::vector<cfloat> truth(size_t(U) * hn);
    const double window_delay =
        double(s.frame_start) - double(mc.timing_offset + g.cp_length) - frame_offset;
    double e = 0;
    for (int j = 0; j < g.slots; ++j)
        for (int d = 0; d < D; ++d) {
            const double from_q =
                double(g.data_symbol(j, d)) * g.symbol_samples() + g.fft_size / 2.0;
            ch.frequency_response(
                g, window_delay, truth.data(), frame_offset + from_q + g.cp_length);
            const cfloat phase =
                std::polar(1.0f,
                           float(2 * M_PI * mc.cfo / mc.sample_rate *
                                     (double(s.frame_start) + from_q) -
                                 2 * M_PI * s.cfo * from_q / g.fft_size));
            for (int c = 0; c < U; ++c) {
                const size_t channel = fr.symbols_per_channel == 1
                                           ? (size_t(j) * U + size_t(c)) * D + size_t(d)
                                           : size_t(j) * U + size_t(c);
                for (size_t k = 0; k < hn; ++k)
                    if (antenna < 0 || k / size_t(nt) == size_t(antenna))
                        e += std::norm(estimated_channel(fr, channel * hn + k, nt) -
                                       truth[size_t(c) * hn + k] * phase);
            }
        }
    return e / (double(g.slots) * D * U * (antenna < 0 ? hn : size_t(nt)));
}

} // namespace mimo_gpu_test
