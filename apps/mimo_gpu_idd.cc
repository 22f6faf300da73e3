// mimo_gpu_idd: what iterative detection and decoding gains. Transport blocks
// of A bits, coded onto G bits, over an nr x nt Rayleigh channel with AWGN,
// received by each detector (one that takes a-priori LLRs) with 1, 2, ...
// outer iterations of the iterative_receiver, and, for comparison, by any
// detector in one pass (--one-shot: e.g. exhaustive ML without feedback).
// Every receiver sees the same noisy blocks at an SNR point.
#include "command_line.h"
#include "error_rate_curves.h"
#include "json_writer.h"

#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/iterative_receiver.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

/// One receiver of the comparison: a detector and its outer iterations.
struct receiver_column {
    detector_spec spec;
    int outer = 1;
    std::vector<uint64_t> errors; ///< per SNR point
    std::vector<uint64_t> passes; ///< outer iterations run, summed over blocks
    double seconds = 0;
    std::string label() const
    {
        return spec.label() + (outer > 0 ? " x" + std::to_string(outer) : " one-shot");
    }
};

} // namespace

int main(int argc, char** argv)
{
    command_line cli("mimo_gpu_idd",
                     "Transport block error rates of iterative detection and decoding: "
                     "each detector with 1, 2, ... outer iterations, beside one-shot "
                     "receivers, the same noisy blocks for each.",
                     "An outer iteration detects with the decoder's extrinsic LLRs as "
                     "priors (none on the first) and decodes the detector's extrinsic "
                     "LLRs; a receiver stops once every block of a batch passes its "
                     "CRC. The last table gives the SNR at BLER --target (log-linear "
                     "between the points around it).");
    cli.add_option("A", "N", "information bits per transport block", "1000");
    cli.add_option(
        "G", "N", "coded bits per transport block (a multiple of nt * Qm)", "2048");
    cli.add_option("modulation", "NAME", "qpsk, 16qam, 64qam, ...", "16qam");
    cli.add_option("nr", "N", "receive antennas", "4");
    cli.add_option("nt", "N", "streams", "4");
    cli.add_option(
        "detectors", "LIST", "detectors with priors, e.g. kbest:16,ml", "kbest:16");
    cli.add_option("outer", "LIST", "outer iterations of each, e.g. 1,2,3,4", "1,2,3");
    cli.add_option("one-shot", "LIST", "also these detectors, run once without feedback");
    cli.add_option(
        "snr", "LIST", "SNR points in dB (Es/N0 per receive antenna)", "5,6,7");
    cli.add_option("blocks", "N", "transport blocks per SNR point", "200");
    cli.add_option("batch", "N", "transport blocks per receiver call", "50");
    cli.add_option("target", "BLER", "BLER of the crossing table", "0.1");
    cli.add_option(
        "backend", "NAME", "detector and decoder backend: auto, cpu or cuda", "auto");
    cli.add_option("seed", "N", "seed of bits, channel and noise", "1");
    cli.add_option("loop",
                   "WHERE",
                   "CUDA: device (LLRs and priors stay on the GPU between passes) or "
                   "host (they cross PCIe every pass; for comparison)",
                   "device");
    cli.add_option("json", "FILE", "also write the results as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        transport_block_format f;
        f.A = int(cli.integer("A", 1, 1 << 20));
        f.G = int(cli.integer("G", 1, 1 << 24));
        const modulation mod =
            checked_setup([&] { return modulation_from_string(cli.text("modulation")); });
        const mimo_shape shape{ int(cli.integer("nr", 1, 256)),
                                int(cli.integer("nt", 1, 256)) };
        const backend be = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        f.Qm = constellation(mod).bits_per_symbol();
        checked_setup([&] {
            f.validate_for_decoding();
            return 0;
        });
        const std::vector<double> snrs = number_list(cli.text("snr"));
        const size_t blocks = size_t(cli.integer("blocks", 1, 1LL << 40));
        const size_t batch = size_t(cli.integer("batch", 1, 100000));
        const double target = cli.real("target");
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        const std::string loop = cli.text("loop");
        if (loop != "device" && loop != "host")
            throw usage_error("--loop is device or host, got " + loop);

        std::vector<receiver_column> columns;
        for (const detector_spec& spec :
             checked_setup([&] { return parse_detector_list(cli.text("detectors")); }))
            for (double outer : number_list(cli.text("outer"))) {
                if (!(outer >= 1 && outer <= 16) || outer != std::floor(outer))
                    throw usage_error("--outer takes whole numbers 1..16, got " +
                                      std::to_string(outer));
                columns.push_back({ spec, int(outer) });
            }
        if (cli.is_set("one-shot"))
            for (const detector_spec& spec :
                 checked_setup([&] { return parse_detector_list(cli.text("one-shot")); }))
                columns.push_back({ spec, 0 }); // 0: one pass, no priors needed
        std::vector<std::unique_ptr<iterative_receiver>> idd;
        std::vector<std::unique_ptr<detector>> plain;
        for (receiver_column& c : columns) {
            c.errors.assign(snrs.size(), 0);
            c.passes.assign(snrs.size(), 0);
            std::unique_ptr<detector> det =
                checked_setup([&] { return make_detector(c.spec, shape, mod, be); });
            if (f.G % det->llrs_per_problem() != 0)
                throw usage_error("G = " + std::to_string(f.G) +
                                  " is not a multiple of nt * Qm = " +
                                  std::to_string(det->llrs_per_problem()));
            det->set_bad_problem_policy(bad_problem_policy::erase);
            if (c.outer > 0) {
                iterative_receiver_config rc;
                rc.outer_iterations = c.outer;
                rc.device_loop = loop == "device";
                idd.push_back(checked_setup([&] {
                    return std::make_unique<iterative_receiver>(
                        std::move(det), f, turbo_decoder_config{}, rc, be);
                }));
                plain.push_back(nullptr);
            } else {
                idd.push_back(nullptr);
                plain.push_back(std::move(det));
            }
        }
        transport_block_encoder enc(f);
        transport_block_decoder dec(f, turbo_decoder_config{}, be);
        const size_t per_block = size_t(f.G) / size_t(shape.nt * f.Qm);
        std::printf("A = %d, G = %d (rate %.3f, C = %d), %dx%d %s, backend %s, loop on "
                    "the %s\n",
                    f.A,
                    f.G,
                    double(f.A) / f.G,
                    f.segmentation().C,
                    shape.nr,
                    shape.nt,
                    to_string(mod).c_str(),
                    to_string(dec.active_backend()).c_str(),
                    dec.active_backend() == backend::cuda ? loop.c_str() : "host");
        std::vector<uint8_t> a(batch * f.A), coded(batch * f.G), decoded(batch * f.A);
        std::vector<cfloat> H(batch * per_block * shape.nr * shape.nt),
            y(batch * per_block * shape.nr);
        std::vector<float> llr(batch * f.G);
        for (size_t p = 0; p < snrs.size(); ++p) {
            channel_simulator sim(
                shape, mod, seed + uint64_t(std::llround(snrs[p] * 1000)) * 7919);
            const float n0 = noise_variance_from_snr_db(snrs[p]);
            for (size_t done = 0; done < blocks; done += batch) {
                const size_t n = std::min(batch, blocks - done);
                sim.random_bits(a.data(), n * f.A);
                for (size_t t = 0; t < n; ++t)
                    enc.encode(a.data() + t * f.A, coded.data() + t * f.G);
                sim.run(coded.data(), n * per_block, n0, H.data(), y.data());
                detector_input in;
                in.H = H.data();
                in.y = y.data();
                in.channels = n * per_block;
                in.n0 = n0;
                for (size_t k = 0; k < columns.size(); ++k) {
                    receiver_column& c = columns[k];
                    const auto start = std::chrono::steady_clock::now();
                    std::vector<bool> ok(n);
                    if (idd[k]) {
                        const auto r = idd[k]->receive(in, n, decoded.data());
                        for (size_t t = 0; t < n; ++t) {
                            ok[t] = r[t].decoded.crc_ok;
                            c.passes[p] += uint64_t(r[t].outer_iterations);
                        }
                    } else {
                        plain[k]->detect(in, llr.data());
                        const auto r = dec.decode(llr.data(), n, decoded.data());
                        for (size_t t = 0; t < n; ++t) {
                            ok[t] = r[t].crc_ok;
                            c.passes[p] += 1;
                        }
                    }
                    c.seconds += std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
                    for (size_t t = 0; t < n; ++t)
                        c.errors[p] += !(ok[t] && std::equal(a.begin() + t * f.A,
                                                             a.begin() + (t + 1) * f.A,
                                                             decoded.begin() + t * f.A));
                }
            }
            std::printf("SNR %5.2f dB:", snrs[p]);
            for (const receiver_column& c : columns)
                std::printf(
                    "  %s BLER %.4f", c.label().c_str(), double(c.errors[p]) / blocks);
            std::printf("\n");
            std::fflush(stdout);
        }
        std::printf("\n%-18s %14s %12s %14s %14s %10s\n",
                    "receiver",
                    "SNR at BLER",
                    "mean passes",
                    "ms per block",
                    "us per pass",
                    "Mbit/s");
        for (const receiver_column& c : columns) {
            std::vector<double> bler;
            uint64_t passes = 0;
            for (size_t p = 0; p < snrs.size(); ++p) {
                bler.push_back(double(c.errors[p]) / double(blocks));
                passes += c.passes[p];
            }
            const double all = double(blocks * snrs.size());
            std::printf("%-18s %11.3f dB %12.2f %14.3f %14.2f %10.1f\n",
                        c.label().c_str(),
                        crossing(snrs, bler, target),
                        double(passes) / all,
                        1e3 * c.seconds / all,
                        1e6 * c.seconds / double(passes),
                        double(f.A) * all / c.seconds * 1e-6);
        }
        std::printf("ms per block: receiver wall time (detection and decoding, all "
                    "passes) per transport block; us per pass: per block and pass; "
                    "Mbit/s: information bits over the receiver's wall time.\n");
        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object()
                .value("program", "mimo_gpu_idd")
                .value("A", f.A)
                .value("G", f.G)
                .value("modulation", to_string(mod))
                .value("nr", shape.nr)
                .value("nt", shape.nt)
                .value("backend", to_string(dec.active_backend()))
                .value("blocks_per_point", (unsigned long long)blocks)
                .value("batch", (unsigned long long)batch)
                .value("loop", dec.active_backend() == backend::cuda ? loop : "host")
                .begin_array("receivers");
            for (const receiver_column& c : columns) {
                std::vector<double> bler;
                for (size_t p = 0; p < snrs.size(); ++p)
                    bler.push_back(double(c.errors[p]) / double(blocks));
                j.begin_object()
                    .value("detector", c.spec.label())
                    .value("outer_iterations", c.outer)
                    .value("snr_at_target_db", crossing(snrs, bler, target))
                    .value("seconds", c.seconds)
                    .begin_array("points");
                for (size_t p = 0; p < snrs.size(); ++p)
                    j.begin_object()
                        .value("snr_db", snrs[p])
                        .value("bler", bler[p])
                        .value("errors", (unsigned long long)c.errors[p])
                        .value("passes", (unsigned long long)c.passes[p])
                        .end_object();
                j.end_array().end_object();
            }
            j.end_array().end_object();
            out << "\n";
        }
        return 0;
    });
}
