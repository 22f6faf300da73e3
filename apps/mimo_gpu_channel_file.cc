// mimo_gpu_channel_file: writes a simulated recording (H, y and the transmitted
// bits) in the raw formats mimo_gpu_detect_file reads, from the core's seeded
// channel simulator. Test input for file-to-file detection without a radio.
#include "command_line.h"
#include "raw_item_file.h"

#include <mimo_gpu/channel_simulator.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace mimo_gpu_apps;
namespace core = ::mimo_gpu;

namespace {

int run(const command_line& cli)
{
    auto sim = checked_setup([&] {
        core::mimo_shape shape{ int(cli.integer("nr", 1, core::k_largest_shape)),
                                int(cli.integer("nt", 1, core::k_largest_shape)) };
        shape.validate();
        return core::channel_simulator(
            shape,
            core::modulation_from_string(cli.text("modulation")),
            uint64_t(cli.integer("seed", 0, (1LL << 62))));
    });
    const double snr_db = cli.real("snr");
    const float n0 = core::noise_variance_from_snr_db(snr_db);
    const uint64_t problems = uint64_t(cli.integer("problems", 0, 1LL << 40));
    const int S = int(cli.integer("symbols-per-channel", 1, 1 << 16));
    if (problems % uint64_t(S) != 0)
        throw usage_error("--problems " + std::to_string(problems) +
                          " is not a whole number of channels of --symbols-per-channel " +
                          std::to_string(S));
    const size_t batch = std::max(1, 4096 / S); // channels per simulator call

    const size_t h_len = size_t(sim.shape().nr) * sim.shape().nt,
                 y_len = size_t(sim.shape().nr);
    const size_t bits_len = size_t(sim.bits_per_problem());
    raw_item_writer h_file(cli.text("H"), h_len * sizeof(core::cfloat), "H file");
    raw_item_writer y_file(cli.text("y"), y_len * sizeof(core::cfloat), "y file");
    raw_item_writer bits_file(cli.text("bits"), bits_len, "bits file");

    std::vector<core::cfloat> H(batch * h_len), y(batch * S * y_len);
    std::vector<uint8_t> bits(batch * S * bits_len);
    const uint64_t channels = problems / uint64_t(S);
    for (uint64_t done = 0; done < channels;) {
        const size_t n = size_t(std::min<uint64_t>(batch, channels - done));
        sim.random_bits(bits.data(), n * S * bits_len);
        sim.run(bits.data(), n, S, n0, H.data(), y.data());
        h_file.write(H.data(), n);
        y_file.write(y.data(), n * S);
        bits_file.write(bits.data(), n * S);
        done += n;
    }
    h_file.close();
    y_file.close();
    bits_file.close();
    std::printf(
        "%s: %llu problems (%llu channels of S = %d), %d x %d %s, SNR %.2f dB (N0 %.6g): "
        "wrote '%s', '%s', '%s'\n",
        cli.program().c_str(),
        (unsigned long long)problems,
        (unsigned long long)channels,
        S,
        sim.shape().nr,
        sim.shape().nt,
        core::to_string(sim.constel().kind()).c_str(),
        snr_db,
        double(n0),
        h_file.path().c_str(),
        y_file.path().c_str(),
        bits_file.path().c_str());
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_channel_file",
        "Writes a simulated MIMO recording: random bits, mapped to 3GPP QAM symbols, "
        "sent\n"
        "through i.i.d. Rayleigh channels with AWGN (the core's channel_simulator).\n"
        "The files are the input formats of mimo_gpu_detect_file (see its --help):\n"
        "H and y complex64, bits uint8 one bit per byte, nt*Q per problem.\n"
        "With --symbols-per-channel S, S consecutive problems share one channel\n"
        "matrix: the H file has one item per S y items (mimo_gpu_detect_file\n"
        "--symbols-per-channel S reads it).");
    cli.add_option("nr", "NR", "receive antennas", "", true);
    cli.add_option("nt", "NT", "transmitted streams (NT <= NR)", "", true);
    cli.add_option(
        "modulation", "NAME", "qpsk, 16qam, 64qam, 256qam or 1024qam", "16qam");
    cli.add_option("snr", "DB", "Es/N0 per receive antenna in dB", "20");
    cli.add_option(
        "problems", "COUNT", "number of problems (resource elements)", "10000");
    cli.add_option("seed", "SEED", "seed of bits, channel and noise", "1");
    cli.add_option("symbols-per-channel",
                   "S",
                   "consecutive problems sharing one H item (PROBLEMS a multiple of S)",
                   "1");
    cli.add_option("H", "FILE", "channel matrices output, complex64", "", true);
    cli.add_option("y", "FILE", "received vectors output, complex64", "", true);
    cli.add_option("bits", "FILE", "transmitted bits output, uint8", "", true);
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
