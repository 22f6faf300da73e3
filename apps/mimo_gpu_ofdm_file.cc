// mimo_gpu_ofdm_file: MIMO-OFDM recordings as SigMF, made and decoded.
//   record BASE: frames of LTE transport blocks -> transmitter -> multipath
//     channel -> BASE.sigmf-data/-meta (the frame parameters and the transport
//     block size in the meta), the transmitted blocks to BASE.bits, and the
//     same samples decoded live, for comparison.
//   decode BASE: the recording, read in chunks -> front end (ofdm_stream_receiver)
//     -> detector -> transport block decoder -> decoded blocks
//     (--bits-out), with CRC results; --expect FILE compares with the blocks
//     sent. Exit code 1 when no frame is found or a block is wrong.
#include "command_line.h"
#include "raw_item_file.h"

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_receiver.h>
#include <mimo_gpu/ofdm_stream_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>
#include <mimo_gpu/sigmf.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

transport_block_format format_for(const ofdm_grid& g, int A)
{
    transport_block_format f;
    f.G = int(g.frame_bits());
    f.Qm = constellation(g.mod).bits_per_symbol();
    f.A = A;
    f.validate_for_decoding();
    return f;
}

/// Front end (ofdm_stream_receiver: the frames of a stream however it is cut
/// into reads), detector and decoder, frame by frame.
class frame_decoder
{
public:
    frame_decoder(const ofdm_grid& g, int nr, int A, const detector_spec& spec, backend b)
        : m_nr(nr),
          m_format(format_for(g, A)),
          m_rx(g, config(nr, b)),
          m_detector(
              make_detector(spec.name, { { nr, g.nt }, g.mod, spec.parameters }, b)),
          m_decoder(m_format, turbo_decoder_config{}, b),
          m_antennas(size_t(nr)),
          m_H(m_rx.H_items_per_frame() * size_t(nr) * size_t(g.nt)),
          m_y(m_rx.y_items_per_frame() * size_t(nr))
    {
        m_detector->set_bad_problem_policy(bad_problem_policy::erase);
    }
    /// Decodes the frames that `count` more samples (antenna-interleaved) complete.
    void push(const cfloat* interleaved,
              size_t count,
              std::vector<uint8_t>& decoded,
              int& crc_ok)
    {
        for (size_t done = 0; done < count;) {
            const size_t n = std::min(count - done, m_rx.room());
            if (n == 0) // receive() always makes room; a receiver that does not would
                        // loop here
                throw std::logic_error(
                    "mimo_gpu_ofdm_file: the receiver takes no samples");
            for (int r = 0; r < m_nr; ++r) {
                m_antennas[size_t(r)].resize(n);
                for (size_t k = 0; k < n; ++k)
                    m_antennas[size_t(r)][k] =
                        interleaved[(done + k) * size_t(m_nr) + size_t(r)];
            }
            std::vector<const cfloat*> at(m_antennas.size());
            for (int r = 0; r < m_nr; ++r)
                at[size_t(r)] = m_antennas[size_t(r)].data();
            m_rx.push(at.data(), n);
            done += n;
            take_frames(decoded, crc_ok);
        }
    }
    /// The end of the recording: the frames still waiting.
    void finish(std::vector<uint8_t>& decoded, int& crc_ok)
    {
        m_rx.end_stream();
        take_frames(decoded, crc_ok);
    }

private:
    void take_frames(std::vector<uint8_t>& decoded, int& crc_ok)
    {
        for (;;) {
            const std::vector<stream_frame> frames =
                m_rx.receive(1, m_H.data(), m_y.data(), false);
            if (frames.empty() && !m_rx.frames_waiting())
                return;
            for (const stream_frame& f : frames) {
                detector_input in;
                in.H = m_H.data();
                in.y = m_y.data();
                in.channels = m_rx.H_items_per_frame();
                in.symbols_per_channel = m_rx.symbols_per_channel();
                in.n0 = std::max(f.n0, 1e-12f);
                std::vector<float> llr(size_t(m_format.G));
                m_detector->detect(in, llr.data());
                std::vector<uint8_t> a(size_t(m_format.A));
                crc_ok += m_decoder.decode(llr.data(), 1, a.data())[0].crc_ok ? 1 : 0;
                decoded.insert(decoded.end(), a.begin(), a.end());
            }
        }
    }
    static ofdm_receiver_config config(int nr, backend b)
    {
        ofdm_receiver_config c;
        c.nr = nr;
        c.requested = b;
        return c;
    }
    int m_nr;
    transport_block_format m_format;
    ofdm_stream_receiver m_rx;
    std::unique_ptr<detector> m_detector;
    transport_block_decoder m_decoder;
    std::vector<std::vector<cfloat>> m_antennas;
    std::vector<cfloat> m_H, m_y;
};

/// Written whole or not at all (raw_item_writer: a temporary file renamed at the
/// end, removed on failure or a fatal signal; FIFOs and devices directly).
void write_bits(const std::string& path,
                const std::vector<uint8_t>& bits,
                const std::string& role)
{
    raw_item_writer out(path, 1, role);
    out.write(bits.data(), bits.size());
    out.close();
}

/// Transport blocks of A bits from a file written by --record or --bits-out.
std::vector<uint8_t> read_bits(const std::string& path, int A)
{
    raw_item_reader in(path, size_t(A), "expected-bits file");
    std::vector<uint8_t> bits(in.size_bytes());
    in.read(bits.data(), size_t(in.items()));
    return bits;
}

/// Throws file_error when `output` is one of the recording's files (also through
/// links): writing it would destroy the recording.
void require_not_recording(const std::string& output,
                           const std::string& role,
                           const sigmf_reader& reader)
{
    require_not_input(output, role, reader.meta_path(), "recording's meta file");
    require_not_input(output, role, reader.data_path(), "recording's data file");
}

int record(command_line& cli, const std::string& base)
{
    ofdm_grid g = checked_setup([&] { return ofdm_grid::preset(cli.text("grid")); });
    g.nt = int(cli.integer("nt", 1, 8));
    g.mod = checked_setup([&] { return modulation_from_string(cli.text("modulation")); });
    g.slots = int(cli.integer("slots", 1, 1000));
    g.data_symbols = int(cli.integer("data-symbols", 1, 1000));
    g.pilot_positions = checked_setup(
        [&] { return ofdm_grid::parse_pilot_positions(cli.text("pilots")); });
    const int nr =
        cli.is_set("nr") && !cli.text("nr").empty() ? int(cli.integer("nr", 1, 8)) : g.nt;
    const int frames = int(cli.integer("frames", 1, 100000));
    const double rate = cli.real("code-rate");
    if (!(rate > 0.05 && rate < 0.95))
        throw usage_error("--code-rate must be in (0.05, 0.95)");
    const int A = std::max(40, int(rate * double(g.frame_bits())) - 24);
    const transport_block_format fmt = checked_setup([&] { return format_for(g, A); });
    ofdm_transmitter tx = checked_setup([&] { return ofdm_transmitter(g); });
    multipath_config mc;
    mc.nr = nr;
    mc.nt = g.nt;
    mc.profile =
        checked_setup([&] { return delay_profile_from_string(cli.text("profile")); });
    mc.sample_rate = g.sample_rate;
    mc.cfo = cli.real("cfo") * g.subcarrier_spacing();
    mc.timing_offset = int(cli.integer("timing-offset", 0, 1 << 20));
    mc.snr_db = cli.real("snr");
    mc.doppler = cli.real("doppler");
    mc.seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
    multipath_channel ch = checked_setup([&] { return multipath_channel(mc); });
    transport_block_encoder enc(fmt);
    std::mt19937_64 rng(mc.seed);
    std::vector<uint8_t> sent, a(static_cast<size_t>(A)),
        coded(static_cast<size_t>(fmt.G));
    std::vector<cfloat> samples, t(size_t(g.frame_samples()) * g.nt),
        r(ch.output_samples(size_t(g.frame_samples())) * nr);
    for (int f = 0; f < frames; ++f) {
        for (auto& v : a)
            v = uint8_t(rng() & 1);
        enc.encode(a.data(), coded.data());
        tx.modulate(coded.data(), t.data());
        ch.run(t.data(), size_t(g.frame_samples()), r.data());
        samples.insert(samples.end(), r.begin(), r.end());
        sent.insert(sent.end(), a.begin(), a.end());
    }
    sigmf_meta m;
    m.sample_rate = g.sample_rate;
    m.channels = nr;
    m.format = cli.text("format") == "ci16" ? sample_format::ci16 : sample_format::cf32;
    if (cli.text("format") != "ci16" && cli.text("format") != "cf32")
        throw usage_error("--format must be cf32 or ci16");
    if (cli.text("full-scale") == "peak") { // nothing clipped
        float peak = 0;
        for (const cfloat& v : samples)
            peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
        m.ci16_full_scale = peak > 0 ? peak : 1.0f;
    } else {
        m.ci16_full_scale = float(cli.real("full-scale"));
    }
    m.description = "gr-mimo_gpu transmitter through a " + cli.text("profile") +
                    " channel, " + describe(g);
    m.hardware = "simulated (mimo_gpu_ofdm_file record)";
    m.has_grid = true;
    m.grid = g;
    m.snr_db = mc.snr_db;
    m.doppler_hz = mc.doppler;
    m.transport_block_bits = A;
    const size_t n = samples.size() / size_t(nr);
    const uint64_t clipped =
        checked_setup([&] { return write_sigmf(base, m, samples.data(), n); });
    if (clipped > 0)
        std::fprintf(stderr,
                     "warning: %llu of %zu int16 values clipped at --full-scale %g "
                     "(recorded in the meta)\n",
                     (unsigned long long)clipped,
                     samples.size() * 2,
                     double(m.ci16_full_scale));
    write_bits(base + ".bits", sent, "sent-bits file");
    // The same samples decoded live, as the decode command will from the file.
    frame_decoder live(g, nr, A, parse_detector_spec(cli.text("detector")), backend::cpu);
    std::vector<uint8_t> decoded;
    int crc_ok = 0;
    live.push(samples.data(), n, decoded, crc_ok);
    live.finish(decoded, crc_ok);
    size_t errors = 0;
    for (size_t k = 0; k < std::min(decoded.size(), sent.size()); ++k)
        errors += decoded[k] != sent[k];
    std::printf("recorded %d frames (%zu samples x %d channels, %s) to "
                "%s.sigmf-data/-meta, blocks to %s.bits\n",
                frames,
                n,
                nr,
                m.format == sample_format::cf32 ? "cf32" : "ci16",
                base.c_str(),
                base.c_str());
    std::printf("live: %zu frames found, %d CRC ok, %zu bit errors\n",
                decoded.size() / size_t(A),
                crc_ok,
                errors);
    return 0;
}

int decode(command_line& cli, const std::string& path)
{
    sigmf_reader reader(path);
    const sigmf_meta& m = reader.meta();
    const std::string bits_out = cli.is_set("bits-out") ? cli.text("bits-out") : "";
    if (!bits_out.empty())
        require_not_recording(bits_out, "--bits-out", reader);
    const int A = m.transport_block_bits;
    std::vector<uint8_t> sent; // read before decoding: a bad file is refused up front
    if (cli.is_set("expect") && !cli.text("expect").empty() && A > 0)
        sent = read_bits(cli.text("expect"), A);
    if (!m.has_grid)
        throw std::runtime_error(
            path +
            ": the recording has no mimo_gpu frame parameters (mimo_gpu:fft_size ...)");
    if (m.transport_block_bits <= 0)
        throw std::runtime_error(path +
                                 ": the recording does not say its transport block size "
                                 "(mimo_gpu:transport_block_bits)");
    if (m.ci16_values_clipped > 0)
        std::fprintf(stderr,
                     "warning: %s: the recorder clipped %llu int16 values "
                     "(mimo_gpu:ci16_values_clipped)\n",
                     path.c_str(),
                     (unsigned long long)m.ci16_values_clipped);
    const int nr = m.channels;
    if (cli.is_set("nr") && !cli.text("nr").empty())
        reader.require_channels(int(cli.integer("nr", 1, 256)));
    if (m.grid.nt > nr)
        throw std::runtime_error(
            path + ": " + std::to_string(nr) +
            " channels cannot separate nt = " + std::to_string(m.grid.nt) + " streams");
    const backend b = checked_setup(
        [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
    frame_decoder dec(
        m.grid, nr, m.transport_block_bits, parse_detector_spec(cli.text("detector")), b);
    // Chunks of a few frames, as they are read.
    const size_t chunk = size_t(4) * size_t(m.grid.frame_samples());
    std::vector<cfloat> buffer(chunk * size_t(nr));
    std::vector<uint8_t> decoded;
    int crc_ok = 0;
    while (const size_t got = reader.read(buffer.data(), chunk))
        dec.push(buffer.data(), got, decoded, crc_ok);
    dec.finish(decoded, crc_ok);
    const size_t frames = decoded.size() / size_t(m.transport_block_bits);
    std::printf("%s: %zu samples x %d channels, %s; %zu frames found, %d CRC ok\n",
                reader.data_path().c_str(),
                reader.samples_per_channel(),
                nr,
                describe(m.grid).c_str(),
                frames,
                crc_ok);
    if (frames == 0) { // a failed run leaves an existing --bits-out as it was
        std::fprintf(stderr,
                     "mimo_gpu_ofdm_file: no frame found in %s: nothing decoded\n",
                     path.c_str());
        return 1;
    }
    if (!bits_out.empty())
        write_bits(bits_out, decoded, "--bits-out file");
    int status = 0;
    if (cli.is_set("expect") && !cli.text("expect").empty()) {
        const size_t expected = sent.size() / size_t(A);
        size_t errors = 0;
        for (size_t k = 0; k < std::min(decoded.size(), sent.size()); ++k)
            errors += decoded[k] != sent[k];
        if (frames == expected)
            std::printf("against %s: %zu of %zu blocks decoded, %zu bit errors\n",
                        cli.text("expect").c_str(),
                        frames,
                        expected,
                        errors);
        else
            std::printf("against %s: %zu blocks decoded but the file holds %zu; %zu bit "
                        "errors in the %zu "
                        "compared\n",
                        cli.text("expect").c_str(),
                        frames,
                        expected,
                        errors,
                        std::min(frames, expected));
        if (errors || frames != expected)
            status = 1;
    }
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_ofdm_file",
        "MIMO-OFDM recordings as SigMF (docs/front_end.md, \"Recordings\").\n"
        "  mimo_gpu_ofdm_file --record BASE [options]   simulate frames and record them\n"
        "  mimo_gpu_ofdm_file --decode BASE [options]   decode a recording\n"
        "A recording is BASE.sigmf-data (samples of every antenna) and BASE.sigmf-meta "
        "(sample\n"
        "rate, channel count, the module's frame parameters, the transport block size).");
    cli.add_option("record",
                   "BASE",
                   "write a simulated recording to BASE.sigmf-data/-meta and BASE.bits");
    cli.add_option("decode",
                   "PATH",
                   "decode the recording BASE (or BASE.sigmf-meta / BASE.sigmf-data)");
    cli.add_option("grid", "NAME", "record: grid preset", "lte1.4");
    cli.add_option("nt", "N", "record: transmit antennas", "2");
    cli.add_option("nr",
                   "N",
                   "record: receive antennas (channels; default nt); decode: the "
                   "channels the recording must have");
    cli.add_option("modulation", "NAME", "record: qpsk, 16qam, 64qam, 256qam", "16qam");
    cli.add_option("slots", "N", "record: slots per frame", "2");
    cli.add_option("data-symbols", "N", "record: data symbols per slot", "6");
    cli.add_option("pilots",
                   "LIST",
                   "record: positions of each slot's pilot symbols, e.g. 0 or 3,10",
                   "0");
    cli.add_option("frames", "N", "record: frames (one transport block each)", "4");
    cli.add_option("code-rate", "R", "record: transport block code rate", "0.5");
    cli.add_option("profile", "NAME", "record: flat, epa, eva, etu", "epa");
    cli.add_option("snr", "DB", "record: SNR per receive antenna", "25");
    cli.add_option("cfo", "X", "record: CFO in subcarrier spacings", "0.2");
    cli.add_option("doppler",
                   "HZ",
                   "record: maximum Doppler frequency (0: new taps per frame)",
                   "0");
    cli.add_option(
        "timing-offset", "N", "record: noise samples before each frame", "100");
    cli.add_option("format", "NAME", "record: cf32 or ci16", "cf32");
    cli.add_option("full-scale",
                   "X",
                   "record: the float value of int16 32767 (ci16), or 'peak': the "
                   "samples' largest part",
                   "peak");
    cli.add_option("seed", "N", "record: seed", "1");
    cli.add_option("detector", "SPEC", "detector", "mmse");
    cli.add_option("backend", "NAME", "decode: auto, cpu or cuda", "auto");
    cli.add_option("bits-out", "FILE", "decode: write the decoded blocks (uint8 bits)");
    cli.add_option("expect",
                   "FILE",
                   "decode: compare with these blocks (BASE.bits of the recording)");
    return run_program(cli, argc, argv, [&]() -> int {
        const bool rec = cli.is_set("record") && !cli.text("record").empty();
        const bool dec = cli.is_set("decode") && !cli.text("decode").empty();
        if (rec == dec)
            throw usage_error("give exactly one of --record BASE and --decode PATH");
        return rec ? record(cli, cli.text("record")) : decode(cli, cli.text("decode"));
    });
}
