// mimo_gpu_ldpc_harq: the block error rate of NR transport blocks after 1, 2
// and 4 HARQ transmissions, BPSK over AWGN. Each block is sent up to four
// times, each time with fresh noise at the same Es/N0 (per coded bit, per
// transmission): incremental redundancy (IR) with rv 0, 2, 3, 1 (38.214's
// order), and Chase combining (rv 0 each time). Every transmission is added
// into the block's HARQ soft buffer and the buffer is decoded
// (nr_transport_block_decoder with the caller's soft buffers). A block counts
// as delivered after n transmissions when one of its first n decodes passed
// the CRC with the sent bits; the residual BLER after n is the rest.
#include "command_line.h"
#include "error_rate_curves.h"
#include "json_writer.h"

#include <mimo_gpu/nr_transport_block.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

/// A retransmission scheme: its redundancy versions, in order.
struct scheme {
    std::string name;
    std::vector<int> rvs;
};

/// One curve: a scheme after n transmissions.
struct curve {
    std::string label;
    size_t scheme, transmissions;
    std::vector<uint64_t> errors, blocks;
};

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_ldpc_harq",
        "Residual block error rate of NR LDPC transport blocks after 1, 2 and 4 HARQ "
        "transmissions (incremental redundancy rv 0, 2, 3, 1, and Chase combining), "
        "BPSK over AWGN.",
        "Es/N0 is per coded bit and per transmission (sigma^2 = 1 / (2 Es/N0) per real "
        "dimension). Example:\n"
        "  mimo_gpu_ldpc_harq --A 3824 --G 4608 --esn0 -2,0,2,4,6 --json harq.json");
    cli.add_option("A", "N", "transport block bits", "3824");
    cli.add_option("G", "N", "coded bits per transmission", "4608");
    cli.add_option(
        "esn0", "LIST", "Es/N0 points in dB, comma separated", "-2,-1,0,1,2,3,4,5,6");
    cli.add_option("blocks", "N", "transport blocks per point", "2000");
    cli.add_option("batch", "N", "transport blocks per decoder call", "500");
    cli.add_option("iterations", "N", "layered LDPC iterations (offset min-sum)", "10");
    cli.add_option("target", "BLER", "BLER of the crossing table", "0.1");
    cli.add_option("backend", "NAME", "auto, cpu or cuda", "auto");
    cli.add_option("seed", "N", "seed of bits and noise", "1");
    cli.add_option("json", "FILE", "also write the results as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        nr_transport_block_format f;
        f.A = int(cli.integer("A", 1, 1277992));
        f.G = int(cli.integer("G", 1, 1 << 26));
        f.Qm = 1;
        checked_setup([&] {
            f.validate();
            return 0;
        });
        const uint64_t blocks = uint64_t(cli.integer("blocks", 1, 1LL << 30));
        const size_t batch = size_t(cli.integer("batch", 1, 1 << 20));
        const double target = cli.real("target");
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        const std::vector<double> esn0 = number_list(cli.text("esn0"));
        ldpc_decoder_config cfg;
        cfg.iterations = int(cli.integer("iterations", 1, 100));
        const backend be = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        const std::vector<scheme> schemes = { { "IR", { 0, 2, 3, 1 } },
                                              { "Chase", { 0, 0, 0, 0 } } };
        std::vector<curve> curves;
        for (size_t s = 0; s < schemes.size(); ++s)
            for (size_t n : { 1, 2, 4 })
                if (s == 0 || n > 1) // Chase after one transmission is IR's
                    curves.push_back({ schemes[s].name + " x" + std::to_string(n),
                                       s,
                                       n,
                                       std::vector<uint64_t>(esn0.size(), 0),
                                       std::vector<uint64_t>(esn0.size(), 0) });
        std::vector<nr_transport_block_encoder> encoders;
        for (int rv = 0; rv < 4; ++rv) {
            nr_transport_block_format g = f;
            g.rv = rv;
            encoders.emplace_back(g);
        }
        nr_transport_block_decoder dec =
            checked_setup([&] { return nr_transport_block_decoder(f, cfg, be); });
        const nr_segmentation seg = dec.segmentation();
        std::printf("A = %d, G = %d per transmission (rate %.4f), BG%d, Zc %d, %d code "
                    "block%s; offset min-sum, %d iterations; %llu blocks per point; "
                    "decoder on %s\n",
                    f.A,
                    f.G,
                    double(f.A) / f.G,
                    seg.base_graph,
                    seg.Zc,
                    seg.C,
                    seg.C == 1 ? "" : "s",
                    cfg.iterations,
                    (unsigned long long)blocks,
                    to_string(dec.active_backend()).c_str());
        std::mt19937_64 rng(seed);
        std::normal_distribution<double> normal(0.0, 1.0);
        const size_t A = size_t(f.A), G = size_t(f.G), per_tb = dec.soft_buffer_size();
        std::vector<uint8_t> a, coded(G), decoded;
        std::vector<float> llr, soft;
        for (size_t p = 0; p < esn0.size(); ++p) {
            const double sigma2 = 1.0 / (2.0 * std::pow(10.0, esn0[p] / 10.0));
            const double sigma = std::sqrt(sigma2);
            for (uint64_t done = 0; done < blocks; done += batch) {
                const size_t count = size_t(std::min<uint64_t>(batch, blocks - done));
                a.resize(count * A);
                for (auto& b : a)
                    b = uint8_t(rng() & 1);
                decoded.resize(count * A);
                llr.resize(count * G);
                for (size_t s = 0; s < schemes.size(); ++s) {
                    soft.assign(count * per_tb, 0.0f);
                    std::vector<bool> delivered(count, false);
                    for (size_t n = 1; n <= 4; ++n) {
                        const int rv = schemes[s].rvs[n - 1];
                        for (size_t t = 0; t < count; ++t) {
                            encoders[size_t(rv)].encode(a.data() + t * A, coded.data());
                            for (size_t i = 0; i < G; ++i)
                                llr[t * G + i] = float(
                                    2.0 *
                                    ((coded[i] ? -1.0 : 1.0) + sigma * normal(rng)) /
                                    sigma2);
                        }
                        dec.set_redundancy_version(rv);
                        const auto r =
                            dec.decode(llr.data(), count, decoded.data(), soft.data());
                        for (size_t t = 0; t < count; ++t)
                            delivered[t] =
                                delivered[t] ||
                                (r[t].crc_ok && std::equal(decoded.begin() + t * A,
                                                           decoded.begin() + (t + 1) * A,
                                                           a.begin() + t * A));
                        for (curve& c : curves)
                            if (c.scheme == s && c.transmissions == n) {
                                c.blocks[p] += count;
                                c.errors[p] += uint64_t(std::count(
                                    delivered.begin(), delivered.end(), false));
                            }
                    }
                }
            }
            std::printf("Es/N0 %6.2f dB:", esn0[p]);
            for (const curve& c : curves)
                std::printf("  %s BLER %.4e (%llu/%llu)",
                            c.label.c_str(),
                            double(c.errors[p]) / double(c.blocks[p]),
                            (unsigned long long)c.errors[p],
                            (unsigned long long)c.blocks[p]);
            std::printf("\n");
            std::fflush(stdout);
        }
        std::printf("\nscheme        Es/N0 at BLER %g   gain over one transmission\n",
                    target);
        std::vector<double> at(curves.size());
        for (size_t k = 0; k < curves.size(); ++k) {
            std::vector<double> rate;
            for (size_t p = 0; p < esn0.size(); ++p)
                rate.push_back(double(curves[k].errors[p]) / double(curves[k].blocks[p]));
            at[k] = crossing(esn0, rate, target);
            std::printf("%-12s %10.2f dB   %+8.2f dB\n",
                        curves[k].label.c_str(),
                        at[k],
                        at[0] - at[k]);
        }
        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object();
            j.value("program", "mimo_gpu_ldpc_harq")
                .value("A", f.A)
                .value("G", f.G)
                .value("base_graph", seg.base_graph)
                .value("Zc", seg.Zc)
                .value("code_blocks", seg.C)
                .value("iterations", cfg.iterations)
                .value("backend", to_string(dec.active_backend()))
                .value("target_bler", target);
            j.begin_array("schemes");
            for (size_t k = 0; k < curves.size(); ++k) {
                j.begin_object();
                j.value("scheme", curves[k].label)
                    .value("transmissions", (long long)curves[k].transmissions)
                    .value("esn0_at_target_db", at[k]);
                j.begin_array("points");
                for (size_t p = 0; p < esn0.size(); ++p)
                    j.begin_object()
                        .value("esn0_db", esn0[p])
                        .value("bler",
                               double(curves[k].errors[p]) / double(curves[k].blocks[p]))
                        .value("errors", (long long)curves[k].errors[p])
                        .value("blocks", (long long)curves[k].blocks[p])
                        .end_object();
                j.end_array();
                j.end_object();
            }
            j.end_array();
            j.end_object();
            out << "\n";
            std::printf("wrote %s\n", cli.text("json").c_str());
        }
        return 0;
    });
}
