// mimo_gpu_ofdm_link: the MIMO-OFDM link from antenna samples, simulated.
// Per SNR point: transport blocks -> ofdm_transmitter -> multipath_channel
// (EPA/EVA/ETU, CFO, timing offset) -> ofdm_receiver (sync, FFT, pilot
// estimates) -> detector -> transport block decoder, beside the same frames
// with a perfect channel (genie timing, CFO and H: the frame's, or under
// Doppler every data symbol's). Prints and writes the coded
// BLER of both and the loss in dB at BLER 0.1, the channel-estimate MSE at the
// pilots beside the LS theory N0/nt (and after interpolation beside the
// interpolation's noise theory), the pilot N0 estimate, the EVM of the MMSE
// equaliser's symbols per stream with estimated and with perfect channels
// (data-aided: against the symbols sent), and a snapshot of channel magnitudes
// and equalised symbols that mimo_gpu_plot_front_end.py draws.
#include "command_line.h"
#include "json_writer.h"

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/evm.h>
#include <mimo_gpu/ici_canceller.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/mmse_detector.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/nr_transport_block.h>
#include <mimo_gpu/ofdm_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

struct point {
    double snr = 0;
    int frames = 0, lost_sync = 0, errors_estimated = 0, errors_perfect = 0;
    double mse_pilots = 0, mse_theory = 0, mse_interpolated = 0,
           mse_interpolated_theory = 0, n0_estimate = 0, n0 = 0;
    /// per receive antenna: the true noise and the mean estimate; frames whitened
    std::vector<double> antenna_n0, antenna_n0_estimate;
    int whitened = 0;
    /// blocks that failed first and passed after cancelling the inter-carrier
    /// interference (--ici-passes)
    int ici_rescued_estimated = 0, ici_rescued_perfect = 0;
    /// frames estimated with the frame before's pilot symbols too (--across-frames)
    int linked = 0;
    /// EVM per stream, estimated and perfect channels: the sum of the frames'
    /// squared EVM until finish_evm(), then the RMS over those frames (frames
    /// that lost sync have no estimated-channel EVM).
    std::vector<double> evm_estimated, evm_perfect;
    int evm_frames_estimated = 0, evm_frames_perfect = 0;
};

/// --antenna-noise: nr values in dB ("" : none).
std::vector<double> antenna_noise_of(const std::string& text, int nr)
{
    std::vector<double> db;
    if (text.empty())
        return db;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        size_t used = 0;
        double v = NAN;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || !std::isfinite(v) || std::abs(v) > 100)
            throw usage_error("--antenna-noise: '" + item +
                              "' is not a number of dB within +-100");
        db.push_back(v);
    }
    if (int(db.size()) != nr)
        throw usage_error("--antenna-noise needs " + std::to_string(nr) +
                          " values (one per receive antenna), got " +
                          std::to_string(db.size()));
    return db;
}

/// A received frame as the detectors take it (N0 kept above 0).
detector_input detector_input_of(const front_end_frame& fr)
{
    detector_input in;
    in.H = fr.H.data();
    in.y = fr.y.data();
    in.channels = fr.channels;
    in.symbols_per_channel = fr.symbols_per_channel;
    in.n0 = std::max(fr.n0, 1e-12f);
    return in;
}

/// Adds a frame's per-stream squared EVM to a point's sums; a frame with a
/// stream of nothing measured (every symbol erased) is left out.
void add_evm(std::vector<double>& sums, int& frames, const evm_measurement& m)
{
    for (double v : m.per_stream)
        if (!std::isfinite(v))
            return;
    if (sums.empty())
        sums.assign(m.per_stream.size(), 0.0);
    for (size_t u = 0; u < sums.size(); ++u)
        sums[u] += m.per_stream[u] * m.per_stream[u];
    ++frames;
}

void finish_evm(std::vector<double>& sums, int frames, int nt)
{
    if (sums.empty()) // no frame measured: NaN for each stream
        sums.assign(size_t(nt), 0.0);
    for (double& v : sums)
        v = frames > 0 ? std::sqrt(v / frames) : NAN;
}

/// The RMS over streams of a point's per-stream EVM values, in percent (NaN: none).
double evm_percent(const std::vector<double>& per_stream)
{
    if (per_stream.empty())
        return NAN;
    double s = 0;
    for (double v : per_stream)
        s += v * v;
    return 100.0 * std::sqrt(s / double(per_stream.size()));
}

/// SNR where the BLER curve crosses `target` (log-linear between points); NaN if never.
double crossing(const std::vector<point>& pts, bool perfect, double target)
{
    for (size_t k = 1; k < pts.size(); ++k) {
        auto bler = [&](const point& p) {
            return std::max(
                1e-6, double(perfect ? p.errors_perfect : p.errors_estimated) / p.frames);
        };
        const double a = bler(pts[k - 1]), b = bler(pts[k]);
        if (a >= target && b < target)
            return pts[k - 1].snr + (std::log(target) - std::log(a)) /
                                        (std::log(b) - std::log(a)) *
                                        (pts[k].snr - pts[k - 1].snr);
    }
    return NAN;
}

/// Mean over a slot's subcarriers of (1-a)^2 + a^2: the noise left after linear
/// interpolation between two LS pilots of variance 1 (1 at the pilots).
double interpolation_noise_factor(const ofdm_grid& g)
{
    double s = 0;
    for (int t = 0; t < g.nt; ++t)
        for (int c = 0; c < g.used_subcarriers; ++c) {
            const int lo = c >= t ? c - (c - t) % g.nt : -1;
            const int hi = lo < 0 ? t : (lo + g.nt < g.used_subcarriers ? lo + g.nt : -1);
            if (lo < 0 || hi < 0 || lo == c)
                s += 1;
            else {
                const double a = double(g.offset(c) - g.offset(lo)) /
                                 double(g.offset(hi) - g.offset(lo));
                s += (1 - a) * (1 - a) + a * a;
            }
        }
    return s / (double(g.nt) * g.used_subcarriers);
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli("mimo_gpu_ofdm_link",
                     "Simulates the MIMO-OFDM link from antenna samples: transmitter, "
                     "multipath channel with\n"
                     "CFO and timing offset, the receiver front end (sync, FFT, pilot "
                     "channel estimates,\n"
                     "noise estimate), a detector and the LTE transport block decoder; "
                     "coded BLER with\n"
                     "estimated channels beside a perfect channel, and the estimates' "
                     "MSE beside theory.");
    cli.add_option("grid",
                   "NAME",
                   "resource grid preset (lte1.4, lte3, lte5, lte10, lte15, lte20, nr20, "
                   "nr40, nr100)",
                   "lte1.4");
    cli.add_option("nt", "N", "transmit antennas = streams", "2");
    cli.add_option("nr", "N", "receive antennas", "2");
    cli.add_option("modulation", "NAME", "qpsk, 16qam, 64qam, 256qam, 1024qam", "16qam");
    cli.add_option("slots", "N", "slots per frame", "2");
    cli.add_option("data-symbols", "N", "data symbols per slot", "6");
    cli.add_option("pilots",
                   "LIST",
                   "positions of each slot's pilot symbols among its pilot and data "
                   "symbols, e.g. 0 or 3,10 (1 to 4 of them)",
                   "0");
    cli.add_option("profile", "NAME", "flat, epa, eva, etu", "epa");
    cli.add_option(
        "doppler",
        "HZ",
        "maximum Doppler frequency (0: block fading, new taps per frame; "
        "above: continuous Clarke/Jakes fading, e.g. 5, 70, 300 for EPA5, EVA70, ETU300)",
        "0");
    cli.add_option(
        "cfo", "X", "carrier frequency offset in subcarrier spacings (|X| < 1)", "0.2");
    cli.add_option("timing-offset", "N", "samples of noise before each frame", "100");
    cli.add_option("interpolation",
                   "NAME",
                   "hold, linear or lmmse (in time, across the pilot symbols)",
                   "hold");
    cli.add_option("frequency",
                   "NAME",
                   "lmmse or linear (along each antenna's pilot comb)",
                   "lmmse");
    cli.add_option("lmmse-window", "N", "comb pilots per LMMSE estimate (2..16)", "8");
    cli.add_option("lmmse-delay-spread",
                   "SAMPLES",
                   "the LMMSE model's delay spread (-1: estimated per frame)",
                   "-1");
    cli.add_option("antenna-noise",
                   "DB_LIST",
                   "each receive antenna's noise relative to the SNR's, in dB (nr "
                   "values, e.g. 0,0,0,10; empty: alike)",
                   "");
    cli.add_flag("noise-per-antenna",
                 "measure each antenna's noise and whiten where they differ (default; "
                 "--no-noise-per-antenna: one N0 for all)",
                 true);
    cli.add_option("detector", "SPEC", "detector (registry name and parameters)", "mmse");
    cli.add_option("ici-passes",
                   "N",
                   "passes of inter-carrier interference cancellation for a block that "
                   "fails its CRC: the last detection's hard decisions rebuild the "
                   "interference of the channel's change within each symbol, which is "
                   "taken from y before detecting and decoding again (0: none; needs "
                   "--interpolation linear or lmmse)",
                   "0");
    cli.add_flag("across-frames",
                 "estimation across frames: each frame (of one SNR point's stream: the "
                 "fading runs on from frame to frame) that its own Doppler says is slow "
                 "adds the frame before's pilot symbols to its time filter (needs "
                 "--interpolation lmmse and --doppler > 0)");
    cli.add_option("code-rate", "R", "transport block code rate A/G", "0.5");
    cli.add_option("code",
                   "NAME",
                   "the transport block's code: turbo (LTE 36.212) or ldpc (NR 38.212, "
                   "offset min-sum, 10 iterations)",
                   "turbo");
    cli.add_option("snr", "RANGE", "SNR points in dB, start:stop:step", "0:20:2");
    cli.add_option(
        "frames", "N", "frames (one transport block each) per SNR point", "100");
    cli.add_option(
        "backend", "NAME", "auto, cpu or cuda (receiver, detector and decoder)", "auto");
    cli.add_option("seed", "N", "seed", "1");
    cli.add_option("json", "FILE", "write the results (and a plot snapshot) as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        ofdm_grid g = checked_setup([&] { return ofdm_grid::preset(cli.text("grid")); });
        g.nt = int(cli.integer("nt", 1, 8));
        g.mod =
            checked_setup([&] { return modulation_from_string(cli.text("modulation")); });
        g.slots = int(cli.integer("slots", 1, 1000));
        g.data_symbols = int(cli.integer("data-symbols", 1, 1000));
        g.pilot_positions = checked_setup(
            [&] { return ofdm_grid::parse_pilot_positions(cli.text("pilots")); });
        checked_setup([&] { return (g.validate(), 0); });
        const int nr = int(cli.integer("nr", 1, 8));
        const backend b = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        const std::string interp = cli.text("interpolation");
        if (interp != "hold" && interp != "linear" && interp != "lmmse")
            throw usage_error("--interpolation must be hold, linear or lmmse, got '" +
                              interp + "'");
        ofdm_receiver_config rc;
        rc.nr = nr;
        rc.interpolation = interp == "hold"     ? time_interpolation::hold
                           : interp == "linear" ? time_interpolation::linear
                                                : time_interpolation::lmmse;
        rc.requested = b;
        const std::string freq = cli.text("frequency");
        if (freq != "lmmse" && freq != "linear")
            throw usage_error("--frequency must be lmmse or linear, got '" + freq + "'");
        rc.lmmse_window = int(cli.integer("lmmse-window", 2, 16));
        rc.lmmse_delay_spread = cli.real("lmmse-delay-spread");
        rc.frequency = freq == "lmmse" ? frequency_interpolation::lmmse
                                       : frequency_interpolation::linear;
        rc.noise_per_antenna = cli.flag("noise-per-antenna").value_or(true);
        rc.across_frames = cli.flag("across-frames").value_or(false);
        if (rc.across_frames && (interp != "lmmse" || !(cli.real("doppler") > 0)))
            throw usage_error(
                "--across-frames needs --interpolation lmmse and --doppler > 0 "
                "(without Doppler each frame draws a channel of its own)");
        const std::vector<double> antenna_noise_db = antenna_noise_of(
            cli.is_set("antenna-noise") ? cli.text("antenna-noise") : std::string(), nr);
        ofdm_transmitter tx = checked_setup([&] { return ofdm_transmitter(g); });
        ofdm_receiver rx = checked_setup([&] { return ofdm_receiver(g, rc); });
        const detector_spec spec =
            checked_setup([&] { return parse_detector_spec(cli.text("detector")); });
        auto det = checked_setup([&] {
            return make_detector(spec.name, { { nr, g.nt }, g.mod, spec.parameters }, b);
        });
        det->set_bad_problem_policy(bad_problem_policy::erase);
        const int ici_passes = int(cli.integer("ici-passes", 0, 8));
        if (ici_passes > 0 && interp == "hold")
            throw usage_error("--ici-passes needs a channel per data symbol: "
                              "--interpolation linear or lmmse");
        std::unique_ptr<ici_canceller> ici =
            ici_passes > 0 ? std::make_unique<ici_canceller>(g) : nullptr;
        transport_block_format fmt; // A, G and Qm of either code
        fmt.G = int(g.frame_bits());
        fmt.Qm = constellation(g.mod).bits_per_symbol();
        const double rate = cli.real("code-rate");
        if (!(rate > 0.05 && rate < 0.95))
            throw usage_error("--code-rate must be in (0.05, 0.95)");
        fmt.A = std::max(40, int(rate * fmt.G) - 24);
        const std::string code = cli.text("code");
        if (code != "turbo" && code != "ldpc")
            throw usage_error("--code must be turbo or ldpc, got '" + code + "'");
        // One transport block per frame: encode A -> G bits, decode G LLRs -> A
        // bits and the CRC verdict.
        std::function<void(const uint8_t*, uint8_t*)> encode;
        std::function<bool(const float*, uint8_t*)> decode_block;
        if (code == "ldpc") {
            nr_transport_block_format nr;
            nr.A = fmt.A;
            nr.G = fmt.G;
            nr.Qm = fmt.Qm;
            checked_setup([&] {
                nr.validate();
                return 0;
            });
            auto enc = std::make_shared<nr_transport_block_encoder>(nr);
            auto dec = std::make_shared<nr_transport_block_decoder>(
                nr, ldpc_decoder_config{}, b);
            encode = [enc](const uint8_t* a, uint8_t* x) { enc->encode(a, x); };
            decode_block = [dec](const float* llr, uint8_t* a) {
                return dec->decode(llr, 1, a)[0].crc_ok;
            };
        } else {
            checked_setup([&] {
                fmt.validate_for_decoding();
                return 0;
            });
            auto enc = std::make_shared<transport_block_encoder>(fmt);
            auto dec =
                std::make_shared<transport_block_decoder>(fmt, turbo_decoder_config{}, b);
            encode = [enc](const uint8_t* a, uint8_t* x) { enc->encode(a, x); };
            decode_block = [dec](const float* llr, uint8_t* a) {
                return dec->decode(llr, 1, a)[0].crc_ok;
            };
        }
        const double cfo = cli.real("cfo");
        if (!(std::abs(cfo) < 1))
            throw usage_error("--cfo must be below one subcarrier spacing");
        const int frames = int(cli.integer("frames", 1, 1000000));
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        const double interp_factor = interpolation_noise_factor(g);
        std::printf("mimo_gpu_ofdm_link: %dx%d, %s, %s, Doppler %g Hz, CFO %.2f "
                    "spacings, timing offset %lld, %s interpolation, "
                    "%s in frequency, detector %s, %s TB A=%d G=%d, receiver on %s\n",
                    nr,
                    g.nt,
                    describe(g).c_str(),
                    cli.text("profile").c_str(),
                    cli.real("doppler"),
                    cfo,
                    cli.integer("timing-offset", 0, 1 << 20),
                    interp.c_str(),
                    freq.c_str(),
                    spec.label().c_str(),
                    code == "ldpc" ? "NR LDPC" : "LTE turbo",
                    fmt.A,
                    fmt.G,
                    b == backend::cuda ? "CUDA" : "CPU");
        if (ici)
            std::printf("a block that fails its CRC: up to %d passes of inter-carrier "
                        "interference cancellation\n",
                        ici_passes);
        std::printf(
            "%6s | %9s %9s | %10s %10s %6s | %10s %10s | %9s %9s | %4s | %8s %8s\n",
            "SNR",
            "BLER est",
            "BLER perf",
            "MSE pilots",
            "N0/nt",
            "ratio",
            "MSE interp",
            "lin theory",
            "N0 est",
            "N0",
            "lost",
            "EVM est%",
            "EVM perf%");
        // The EVM's equaliser: MMSE, unbiased symbols (needs nr >= nt), and the
        // symbols each frame sends, in the detector's order [p * nt + u]. Bad
        // problems are erased (as the detector's), and their symbols left out of
        // the EVM (a SINR of 0 marks them).
        const constellation con(g.mod);
        std::unique_ptr<detector> evm_owner =
            nr >= g.nt ? make_detector("mmse", { { nr, g.nt }, g.mod, {} }, backend::cpu)
                       : nullptr;
        auto* evm_equaliser = dynamic_cast<mmse_detector*>(evm_owner.get());
        if (evm_equaliser)
            evm_equaliser->set_bad_problem_policy(bad_problem_policy::erase);
        std::vector<cfloat> sent(g.data_elements() * size_t(g.nt)), z_evm(sent.size());
        std::vector<float> sinr_evm(sent.size());
        const auto frame_evm = [&](const front_end_frame& fr) {
            evm_equaliser->equalize(detector_input_of(fr), z_evm.data(), sinr_evm.data());
            for (size_t k = 0; k < z_evm.size(); ++k)
                if (!(sinr_evm[k] > 0.0f))
                    z_evm[k] = cfloat(NAN, NAN);
            return measure_evm(z_evm.data(), sent.data(), g.data_elements(), g.nt, con);
        };
        std::vector<point> pts;
        std::mt19937_64 rng(seed);
        std::vector<uint8_t> a(size_t(fmt.A)), coded(size_t(fmt.G)),
            decoded(size_t(fmt.A));
        std::vector<cfloat> samples(size_t(g.frame_samples()) * g.nt);
        std::vector<float> llr(size_t(fmt.G));
        std::vector<uint8_t> hard(llr.size()); // a failed block's decisions
        std::vector<cfloat> decisions(g.data_elements() * size_t(g.nt));
        std::vector<cfloat> H_true(size_t(g.used_subcarriers) * nr * g.nt);
        std::vector<cfloat> H_symbols; // the genie's under Doppler: every data symbol's
        // snapshot for the plots, from the last frame of the highest SNR
        std::vector<cfloat> snap_est, snap_true, snap_z;
        for (double snr : cli.real_range("snr")) {
            multipath_config mc;
            mc.nr = nr;
            mc.nt = g.nt;
            mc.profile = checked_setup(
                [&] { return delay_profile_from_string(cli.text("profile")); });
            mc.sample_rate = g.sample_rate;
            mc.cfo = cfo * g.subcarrier_spacing();
            mc.timing_offset = int(cli.integer("timing-offset", 0, 1 << 20));
            mc.doppler = cli.real("doppler");
            mc.snr_db = snr;
            mc.antenna_noise_db = antenna_noise_db;
            mc.seed = seed * 1000003 + uint64_t(std::lround(snr * 100 + 100000));
            multipath_channel ch = checked_setup([&] { return multipath_channel(mc); });
            std::vector<cfloat> received(ch.output_samples(size_t(g.frame_samples())) *
                                         nr);
            const size_t rn = received.size() / size_t(nr);
            point p;
            p.snr = snr;
            // the reference N0: the antennas' mean, as the receiver reports it
            std::vector<float> antenna_n0(static_cast<size_t>(nr));
            for (int r = 0; r < nr; ++r) {
                antenna_n0[size_t(r)] = ch.antenna_noise_variance(r);
                p.antenna_n0.push_back(antenna_n0[size_t(r)]);
                p.n0 += antenna_n0[size_t(r)] / double(nr);
            }
            p.antenna_n0_estimate.assign(size_t(nr), 0.0);
            p.mse_theory = p.n0 / g.nt;
            p.mse_interpolated_theory = p.mse_theory * interp_factor;
            int measured = 0;
            for (int f = 0; f < frames; ++f) {
                for (auto& v : a)
                    v = uint8_t(rng() & 1);
                encode(a.data(), coded.data());
                tx.map(coded.data(), sent.data());
                tx.modulate(coded.data(), samples.data());
                ch.run(samples.data(), size_t(g.frame_samples()), received.data());
                ++p.frames;
                auto decode = [&](const front_end_frame& fr, int& rescued) {
                    det->detect(detector_input_of(fr), llr.data());
                    if (decode_block(llr.data(), decoded.data()) && decoded == a)
                        return true;
                    // A failed block: cancel the interference the last detection's
                    // decisions rebuild, from the frame's own y each pass.
                    if (!ici || fr.symbols_per_channel != 1)
                        return false;
                    std::vector<cfloat> cleaned(fr.y.size());
                    detector_input in = detector_input_of(fr);
                    in.y = cleaned.data();
                    for (int pass = 0; pass < ici_passes; ++pass) {
                        for (size_t i = 0; i < llr.size(); ++i)
                            hard[i] = llr[i] < 0.0f ? 1 : 0;
                        tx.map(hard.data(), decisions.data());
                        const std::vector<cfloat> leak =
                            ici->interference(fr, decisions.data());
                        for (size_t i = 0; i < cleaned.size(); ++i)
                            cleaned[i] = fr.y[i] - leak[i];
                        det->detect(in, llr.data());
                        if (decode_block(llr.data(), decoded.data()) && decoded == a) {
                            ++rescued;
                            return true;
                        }
                    }
                    return false;
                };
                // genie: true timing and CFO, true channel at that window
                sync_result genie;
                genie.found = genie.complete = true;
                genie.frame_start =
                    size_t(mc.timing_offset + g.cp_length - rx.window_backoff());
                genie.cfo = float(cfo);
                // Without Doppler the true channel of the frame; with it the true
                // channel of every data symbol (at its FFT window's middle).
                const cfloat phase = std::polar(
                    1.0f, float(2 * M_PI * cfo * double(genie.frame_start) / g.fft_size));
                const bool moving = mc.doppler > 0;
                const size_t per_symbol = H_true.size();
                if (moving)
                    H_symbols.resize(per_symbol * g.slots * g.data_symbols);
                for (int q = 0; q < (moving ? g.slots * g.data_symbols : 1); ++q) {
                    const int j = q / g.data_symbols, d = q % g.data_symbols;
                    const double data_start =
                        double(g.data_symbol(j, d)) * g.symbol_samples();
                    cfloat* out =
                        moving ? &H_symbols[size_t(q) * per_symbol] : H_true.data();
                    ch.frequency_response(g,
                                          -rx.window_backoff(),
                                          out,
                                          moving ? data_start + g.fft_size / 2.0 +
                                                       g.cp_length
                                                 : g.frame_samples() / 2.0);
                    for (size_t e = 0; e < per_symbol; ++e)
                        out[e] *= phase;
                }
                const front_end_frame genie_frame =
                    moving ? rx.receive_known_channels(received.data(),
                                                       rn,
                                                       genie,
                                                       H_symbols.data(),
                                                       float(p.n0),
                                                       antenna_n0.data())
                           : rx.receive_known_channel(received.data(),
                                                      rn,
                                                      genie,
                                                      H_true.data(),
                                                      float(p.n0),
                                                      antenna_n0.data());
                if (!decode(genie_frame, p.ici_rescued_perfect))
                    ++p.errors_perfect;
                if (evm_equaliser)
                    add_evm(p.evm_perfect, p.evm_frames_perfect, frame_evm(genie_frame));
                const sync_result s = rx.synchronize(received.data(), rn);
                if (!s.found || !s.complete) {
                    ++p.lost_sync;
                    ++p.errors_estimated;
                    continue;
                }
                // The frame's place in the SNR point's stream: frames run back to
                // back through the channel (a new point starts again: not linked).
                const uint64_t position =
                    uint64_t(f) * uint64_t(g.frame_samples()) + s.frame_start;
                const front_end_frame fr = std::move(
                    rx.receive_frames(received.data(), rn, { s }, &position).front());
                p.linked += fr.linked;
                if (!decode(fr, p.ici_rescued_estimated))
                    ++p.errors_estimated;
                if (evm_equaliser)
                    add_evm(p.evm_estimated, p.evm_frames_estimated, frame_evm(fr));
                // estimates against the true response at the receiver's window and
                // the phase the CFO and its correction leave at each pilot symbol
                // (with Doppler: the true channel at each pilot symbol's middle)
                std::vector<cfloat> Ht(H_true.size());
                const double window_delay =
                    double(s.frame_start) - double(mc.timing_offset + g.cp_length);
                double e_p = 0, e_i = 0;
                const int U = g.used_subcarriers, pilot_symbols = g.pilot_symbols();
                for (int j = 0; j < pilot_symbols; ++j) {
                    const double from_q =
                        double(g.pilot_symbol(j / g.pilot_symbols_per_slot(),
                                              j % g.pilot_symbols_per_slot())) *
                            g.symbol_samples() +
                        g.fft_size / 2.0;
                    ch.frequency_response(
                        g, window_delay, Ht.data(), from_q + g.cp_length);
                    const cfloat ph = std::polar(
                        1.0f,
                        float(2 * M_PI *
                              (cfo * (double(s.frame_start) + from_q) - s.cfo * from_q) /
                              g.fft_size));
                    for (int i = 0; i < U; ++i)
                        for (int r = 0; r < nr; ++r) {
                            e_p += std::norm(fr.pilot_ls[(size_t(j) * U + i) * nr + r] -
                                             Ht[(size_t(i) * nr + r) * g.nt + i % g.nt] *
                                                 ph);
                            for (int t = 0; t < g.nt; ++t) {
                                const size_t o = (size_t(i) * nr + r) * g.nt + t;
                                e_i += std::norm(
                                    fr.pilot_channels[size_t(j) * U * nr * g.nt + o] -
                                    Ht[o] * ph);
                            }
                        }
                }
                p.mse_pilots += e_p / (double(pilot_symbols) * U * nr);
                p.mse_interpolated += e_i / (double(pilot_symbols) * U * nr * g.nt);
                p.n0_estimate += fr.n0;
                for (int r = 0; r < nr; ++r)
                    p.antenna_n0_estimate[size_t(r)] += fr.antenna_n0[size_t(r)];
                p.whitened += fr.whitened ? 1 : 0;
                ++measured;
                if (f == frames - 1) {
                    snap_est.assign(fr.pilot_channels.begin(),
                                    fr.pilot_channels.begin() + ptrdiff_t(Ht.size()));
                    ch.frequency_response(
                        g,
                        window_delay,
                        Ht.data(),
                        double(g.pilot_symbol(0, 0)) * g.symbol_samples() +
                            g.fft_size / 2.0 + g.cp_length); // the first pilot symbol
                    snap_true = Ht;
                    for (auto& h : snap_true)
                        h *= std::polar(
                            1.0f,
                            float(2 * M_PI *
                                  (cfo * (double(s.frame_start) + g.symbol_samples() +
                                          g.fft_size / 2.0) -
                                   s.cfo * (g.symbol_samples() + g.fft_size / 2.0)) /
                                  g.fft_size));
                    if (evm_equaliser) { // the frame's equalised symbols (its EVM's),
                                         // for the constellation plot
                        snap_z.assign(z_evm.begin(),
                                      z_evm.begin() + ptrdiff_t(std::min<size_t>(
                                                          z_evm.size(), 4000)));
                    }
                }
            }
            finish_evm(p.evm_estimated, p.evm_frames_estimated, g.nt);
            finish_evm(p.evm_perfect, p.evm_frames_perfect, g.nt);
            if (measured) {
                p.mse_pilots /= measured;
                p.mse_interpolated /= measured;
                p.n0_estimate /= measured;
                for (double& v : p.antenna_n0_estimate)
                    v /= measured;
            }
            std::printf("%6.1f | %9.4f %9.4f | %10.3e %10.3e %6.3f | %10.3e %10.3e | "
                        "%9.3e %9.3e | %4d | %8.3f %8.3f\n",
                        snr,
                        double(p.errors_estimated) / p.frames,
                        double(p.errors_perfect) / p.frames,
                        p.mse_pilots,
                        p.mse_theory,
                        p.mse_pilots / p.mse_theory,
                        p.mse_interpolated,
                        p.mse_interpolated_theory,
                        p.n0_estimate,
                        p.n0,
                        p.lost_sync,
                        evm_percent(p.evm_estimated),
                        evm_percent(p.evm_perfect));
            if (rc.across_frames)
                std::printf("       across frames: %d of %d frames linked to the frame "
                            "before\n",
                            p.linked,
                            p.frames);
            if (ici)
                std::printf("       ICI cancellation rescued %d of %d failed blocks with "
                            "estimated channels, %d of %d with the perfect channel\n",
                            p.ici_rescued_estimated,
                            p.errors_estimated + p.ici_rescued_estimated,
                            p.ici_rescued_perfect,
                            p.errors_perfect + p.ici_rescued_perfect);
            std::fflush(stdout);
            pts.push_back(p);
        }
        const double s_est = crossing(pts, false, 0.1), s_perf = crossing(pts, true, 0.1);
        std::printf("SNR at BLER 0.1: estimated channels %.2f dB, perfect channel %.2f "
                    "dB, loss %.2f dB\n",
                    s_est,
                    s_perf,
                    s_est - s_perf);
        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object();
            j.value("program", "mimo_gpu_ofdm_link")
                .value("grid", describe(g))
                .value("nr", nr)
                .value("nt", g.nt)
                .value("pilot_positions", pilot_positions_text(g.pilot_positions))
                .value("data_symbols", g.data_symbols);
            j.value("profile", cli.text("profile"))
                .value("doppler_hz", cli.real("doppler"))
                .value("cfo_spacings", cfo)
                .value("interpolation", interp);
            j.value("genie",
                    cli.real("doppler") > 0 ? "every data symbol's channel"
                                            : "the frame's channel")
                .value("frequency_interpolation", freq)
                .value("lmmse_window", rc.lmmse_window)
                .value("lmmse_delay_spread", rc.lmmse_delay_spread)
                .value("noise_per_antenna", rc.noise_per_antenna)
                .value("across_frames", rc.across_frames)
                .values("antenna_noise_db", antenna_noise_db);
            j.value("detector", spec.label())
                .value("ici_passes", ici_passes)
                .value("code", code)
                .value("A", fmt.A)
                .value("G", fmt.G);
            j.value("receiver_backend", b == backend::cuda ? "cuda" : "cpu");
            j.value("snr_at_bler_0.1_estimated", s_est)
                .value("snr_at_bler_0.1_perfect", s_perf);
            j.begin_array("points");
            for (const point& p : pts) {
                j.begin_object();
                j.value("snr_db", p.snr)
                    .value("frames", p.frames)
                    .value("lost_sync", p.lost_sync);
                j.value("bler_estimated", double(p.errors_estimated) / p.frames);
                j.value("bler_perfect", double(p.errors_perfect) / p.frames);
                j.value("mse_pilots", p.mse_pilots)
                    .value("mse_pilots_theory", p.mse_theory);
                j.value("mse_interpolated", p.mse_interpolated)
                    .value("mse_interpolated_theory", p.mse_interpolated_theory);
                j.value("n0_estimate", p.n0_estimate).value("n0", p.n0);
                j.value("ici_rescued_estimated", p.ici_rescued_estimated)
                    .value("ici_rescued_perfect", p.ici_rescued_perfect);
                j.value("linked_frames", p.linked);
                j.value("whitened_frames", p.whitened)
                    .values("antenna_n0", p.antenna_n0)
                    .values("antenna_n0_estimate", p.antenna_n0_estimate);
                j.value("evm_estimated_percent", evm_percent(p.evm_estimated))
                    .value("evm_perfect_percent", evm_percent(p.evm_perfect));
                j.value("evm_frames_estimated", p.evm_frames_estimated)
                    .value("evm_frames_perfect", p.evm_frames_perfect);
                for (const auto& [key, values] :
                     { std::pair{ "evm_estimated_per_stream", &p.evm_estimated },
                       std::pair{ "evm_perfect_per_stream", &p.evm_perfect } }) {
                    j.begin_array(key);
                    for (double v : *values)
                        j.value("", v);
                    j.end_array();
                }
                j.end_object();
            }
            j.end_array();
            // snapshot: |H| per antenna pair over subcarriers (estimate, truth) and
            // equalised symbols
            j.value("snapshot_subcarriers", g.used_subcarriers);
            for (const char* which : { "snapshot_estimated_abs", "snapshot_true_abs" }) {
                const auto& src =
                    std::string(which) == "snapshot_estimated_abs" ? snap_est : snap_true;
                j.begin_array(which);
                for (const cfloat& h : src)
                    j.value("", double(std::abs(h)));
                j.end_array();
            }
            j.begin_array("snapshot_equalised");
            for (const cfloat& z : snap_z) {
                j.begin_array();
                j.value("", double(z.real())).value("", double(z.imag()));
                j.end_array();
            }
            j.end_array();
            j.end_object();
            out << "\n";
            std::printf("wrote %s\n", cli.text("json").c_str());
        }
        return 0;
    });
}
