// mimo_gpu_turbo_ber: bit and frame error rates of the LTE turbo decoder,
// BPSK over AWGN (thesis section 5.2.1): random code blocks of size K, the
// 3GPP encoder, y = 1 - 2b + n, LLR = 2y / sigma^2, sigma^2 = 1 / (2 R Eb/N0)
// with R = K / (3K + 12). Each point runs until it has both seen min-bits
// information bits or min-block-errors frame errors (whichever comes first).
// Every configuration decodes the same noisy blocks (seeded per block).
#include "command_line.h"
#include "json_writer.h"

#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

/// A batch of noisy code blocks, generated on all cores; block i of batch j
/// always gets the same bits and noise (seed, j, i), whatever the thread count.
struct noisy_batch {
    std::vector<uint8_t> bits;
    std::vector<float> llr;

    noisy_batch(int K, int blocks, double ebn0_db, uint64_t seed, uint64_t batch_index)
        : bits(size_t(K) * blocks), llr(size_t(3) * (K + 4) * blocks)
    {
        const double rate = double(K) / (3.0 * K + 12.0);
        const float sigma2 = float(1.0 / (2.0 * rate * std::pow(10.0, ebn0_db / 10.0)));
        const float sigma = std::sqrt(sigma2);
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                std::vector<uint8_t> d0(K + 4), d1(K + 4), d2(K + 4);
                for (int b = int(t); b < blocks; b += int(threads)) {
                    std::seed_seq seq{ seed, batch_index, uint64_t(b) };
                    std::mt19937_64 rng(seq);
                    std::normal_distribution<float> normal(0.0f, 1.0f);
                    uint8_t* c = bits.data() + size_t(b) * K;
                    for (int i = 0; i < K; ++i)
                        c[i] = uint8_t(rng() >> 63);
                    turbo_encode(c, K, d0.data(), d1.data(), d2.data());
                    float* out = llr.data() + size_t(b) * 3 * (K + 4);
                    for (const auto* d : { &d0, &d1, &d2 })
                        for (uint8_t x : *d)
                            *out++ = 2.0f * ((x ? -1.0f : 1.0f) + sigma * normal(rng)) /
                                     sigma2;
                }
            });
        for (auto& th : pool)
            th.join();
    }
};

struct point {
    std::string backend, algorithm;
    int window = 0, training = 0;
    double ebn0 = 0;
    uint64_t bits = 0, bit_errors = 0, blocks = 0, block_errors = 0;
    double seconds = 0;
};

std::vector<std::string> split(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty())
            out.push_back(item);
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_turbo_ber",
        "Bit and frame error rates of the LTE turbo decoder, BPSK over AWGN.",
        "Each point decodes batches of random code blocks until it has min-bits "
        "information bits or "
        "min-block-errors frame errors. --windows 0 means one window per code block (P = "
        "1).");
    cli.add_option("K", "K", "code block size (a TS 36.212 table size)", "6144");
    cli.add_option(
        "ebn0", "LIST", "Eb/N0 points in dB, comma separated", "0.5,0.6,0.7,0.8,1.0");
    cli.add_option(
        "algorithms", "LIST", "max-log-map and/or log-map", "max-log-map,log-map");
    cli.add_option("windows",
                   "LIST",
                   "trellis stages per parallel window; 0 = whole block (P = 1)",
                   "0,64");
    cli.add_option("training",
                   "LIST",
                   "training stages before and after each window (0: none; no effect "
                   "with one window)",
                   std::to_string(turbo_decoder_config{}.training));
    cli.add_option("backends", "LIST", "cpu and/or cuda (or auto)", "auto");
    cli.add_option("iterations", "N", "decoder iterations", "6");
    cli.add_option("scale", "S", "max-log-MAP extrinsic scaling", "0.75");
    cli.add_option("min-bits",
                   "N",
                   "information bits per point (unless min-block-errors come first)",
                   "10000000");
    cli.add_option("min-block-errors", "N", "frame errors that end a point early", "100");
    cli.add_option("batch", "N", "code blocks per decoder call", "256");
    cli.add_option("seed", "N", "seed of bits and noise", "1");
    cli.add_option("json", "FILE", "also write the results as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        const int K = int(cli.integer("K", 40, 6144));
        if (!qpp_interleaver::is_block_size(K))
            throw usage_error("K = " + std::to_string(K) +
                              " is not a size of TS 36.212 table 5.1.3-3");
        const int batch = int(cli.integer("batch", 1, 100000));
        const uint64_t min_bits = uint64_t(cli.integer("min-bits", 1, 1LL << 50));
        const uint64_t min_errors =
            uint64_t(cli.integer("min-block-errors", 1, 1LL << 40));
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        std::vector<double> ebn0;
        for (const auto& s : split(cli.text("ebn0")))
            ebn0.push_back(std::stod(s));
        std::vector<point> points;
        for (const std::string& be_name : split(cli.text("backends")))
            for (const std::string& alg : split(cli.text("algorithms")))
                for (const std::string& w : split(cli.text("windows")))
                    for (const std::string& t : split(cli.text("training"))) {
                        // one window has no neighbours to train from: one row is enough
                        if (std::stoi(w) == 0 && t != split(cli.text("training")).front())
                            continue;
                        turbo_decoder_config cfg;
                        if (alg == "max-log-map")
                            cfg.algorithm = map_algorithm::max_log_map;
                        else if (alg == "log-map")
                            cfg.algorithm = map_algorithm::log_map;
                        else
                            throw usage_error("unknown algorithm '" + alg +
                                              "' (max-log-map or log-map)");
                        cfg.iterations = int(cli.integer("iterations", 1, 32));
                        cfg.extrinsic_scale = float(cli.real("scale"));
                        cfg.window = std::stoi(w) == 0 ? 1 << 20 : std::stoi(w);
                        cfg.training = std::stoi(t);
                        const backend be =
                            checked_setup([&] { return backend_from_string(be_name); });
                        lte_turbo_decoder dec =
                            checked_setup([&] { return lte_turbo_decoder(cfg, be); });
                        const std::vector<int> sizes(size_t(batch), K);
                        std::vector<uint8_t> decoded(size_t(K) * batch);
                        for (double e : ebn0) {
                            point p;
                            p.backend = to_string(dec.active_backend());
                            p.algorithm = alg;
                            p.window = std::stoi(w);
                            p.training = std::stoi(w) == 0 ? 0 : cfg.training;
                            p.ebn0 = e;
                            for (uint64_t j = 0;
                                 p.bits < min_bits && p.block_errors < min_errors;
                                 ++j) {
                                noisy_batch nb(K, batch, e, seed, j);
                                const auto t0 = std::chrono::steady_clock::now();
                                const auto results =
                                    dec.decode(sizes, nb.llr.data(), decoded.data());
                                p.seconds += std::chrono::duration<double>(
                                                 std::chrono::steady_clock::now() - t0)
                                                 .count();
                                for (int b = 0; b < batch; ++b) {
                                    uint64_t errors = 0;
                                    for (int i = 0; i < K; ++i)
                                        errors += decoded[size_t(b) * K + i] !=
                                                  nb.bits[size_t(b) * K + i];
                                    p.bit_errors += errors;
                                    // a block without information is an error even if its
                                    // bits happen to match
                                    p.block_errors +=
                                        errors || results[size_t(b)].no_information ? 1
                                                                                    : 0;
                                }
                                p.bits += uint64_t(K) * batch;
                                p.blocks += uint64_t(batch);
                            }
                            std::fprintf(stderr,
                                         "  %s %s W=%s T=%s Eb/N0 %.2f dB: BER %.3e FER "
                                         "%.3e (%llu "
                                         "bits)\n",
                                         p.backend.c_str(),
                                         alg.c_str(),
                                         w.c_str(),
                                         t.c_str(),
                                         e,
                                         double(p.bit_errors) / p.bits,
                                         double(p.block_errors) / p.blocks,
                                         (unsigned long long)p.bits);
                            points.push_back(p);
                        }
                    }

        std::printf("\nLTE turbo decoder, K = %d, %s iterations, BPSK/AWGN (P = 1 where "
                    "window is 0)\n",
                    K,
                    cli.text("iterations").c_str());
        std::printf("%-5s %-12s %6s %5s %6s | %12s %10s %10s | %8s %8s %10s | %8s\n",
                    "back",
                    "algorithm",
                    "window",
                    "train",
                    "Eb/N0",
                    "bits",
                    "bit errs",
                    "BER",
                    "blocks",
                    "blk errs",
                    "FER",
                    "dec s");
        for (const point& p : points)
            std::printf("%-5s %-12s %6d %5d %6.2f | %12llu %10llu %10.3e | %8llu %8llu "
                        "%10.3e | %8.2f\n",
                        p.backend.c_str(),
                        p.algorithm.c_str(),
                        p.window,
                        p.training,
                        p.ebn0,
                        (unsigned long long)p.bits,
                        (unsigned long long)p.bit_errors,
                        double(p.bit_errors) / p.bits,
                        (unsigned long long)p.blocks,
                        (unsigned long long)p.block_errors,
                        double(p.block_errors) / p.blocks,
                        p.seconds);
        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object();
            j.value("program", "mimo_gpu_turbo_ber")
                .value("K", K)
                .value("iterations", cli.text("iterations"));
            j.value("extrinsic_scale", cli.real("scale")).value("channel", "BPSK AWGN");
            j.begin_array("points");
            for (const point& p : points) {
                j.begin_object();
                j.value("backend", p.backend)
                    .value("algorithm", p.algorithm)
                    .value("window", p.window)
                    .value("training", p.training);
                j.value("ebn0_db", p.ebn0).value("bits", (unsigned long long)p.bits);
                j.value("bit_errors", (unsigned long long)p.bit_errors)
                    .value("ber", double(p.bit_errors) / p.bits);
                j.value("blocks", (unsigned long long)p.blocks)
                    .value("block_errors", (unsigned long long)p.block_errors);
                j.value("fer", double(p.block_errors) / p.blocks)
                    .value("decode_seconds", p.seconds);
                j.end_object();
            }
            j.end_array();
            j.end_object();
            out << "\n";
        }
        return 0;
    });
}
