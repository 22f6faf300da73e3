// mimo_gpu_ldpc_fer: frame error rates of the NR LDPC decoders, BPSK over
// AWGN: a code block of K' information bits (filler up to K = kb Zc), the
// 38.212 encoder, rate matching to E sent bits (rv 0), y = 1 - 2b + n,
// LLR = 2 y / sigma^2 with sigma^2 = 1 / (2 R Eb/N0), R = K' / E; de-rate-
// matching into the circular buffer, the decoders. Every decoder sees the same
// noisy blocks. Beside them: the normal approximation of the finite-length
// limit for n = E channel uses and k = K' bits (Polyanskiy, Poor, Verdu), from
// the BPSK-AWGN capacity and dispersion by numerical integration.
// Decoders: nms:S (normalized min-sum, scale S), oms:O (offset min-sum), sp
// (float sum-product, the library's), sp-double (a double-precision layered
// sum-product written here, the reference; CPU, all cores).
#include "command_line.h"
#include "error_rate_curves.h"
#include "json_writer.h"

#include <mimo_gpu/nr_ldpc.h>
#include <mimo_gpu/nr_transport_block.h>

#include "../lib/core/ldpc/ldpc_engine.h"

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

std::vector<std::string> split(const std::string& list)
{
    std::vector<std::string> out;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty())
            out.push_back(item);
    return out;
}

/// Layered sum-product in double precision (the reference): the exact rule
/// with the others' product of tanh(|Q|/2) from prefix and suffix products.
class double_sum_product
{
public:
    double_sum_product(const ldpc_code& code, int iterations)
        : m_code(code), m_iterations(iterations), m_layers(detail::ldpc_layers::of(code))
    {
    }

    /// One block: llr (codeword_bits) -> bits (K).
    void decode(const float* llr, uint8_t* bits) const
    {
        const int Zc = m_code.Zc, n = m_code.codeword_bits();
        const std::vector<int>&start = m_layers.row_start, &column = m_layers.column,
              &shift = m_layers.shift;
        std::vector<double> L(llr, llr + n), R(column.size() * size_t(Zc), 0.0);
        double q[32], t[32], prefix[33], suffix[33];
        int v[32];
        for (int it = 0; it < m_iterations; ++it)
            for (int r = 0; r < m_code.rows(); ++r) {
                const int first = start[size_t(r)], degree = start[size_t(r) + 1] - first;
                for (int z = 0; z < Zc; ++z) {
                    for (int k = 0; k < degree; ++k) {
                        const int e = first + k;
                        v[k] = column[size_t(e)] * Zc + (z + shift[size_t(e)]) % Zc;
                        q[k] = L[size_t(v[k])] - R[size_t(e) * Zc + z];
                        t[k] = std::tanh(0.5 * q[k]);
                    }
                    prefix[0] = suffix[degree] = 1.0;
                    for (int k = 0; k < degree; ++k)
                        prefix[k + 1] = prefix[k] * t[k];
                    for (int k = degree - 1; k >= 0; --k)
                        suffix[k] = suffix[k + 1] * t[k];
                    for (int k = 0; k < degree; ++k) {
                        const double p = std::clamp(
                            prefix[k] * suffix[k + 1], -1.0 + 1e-15, 1.0 - 1e-15);
                        const double m = 2.0 * std::atanh(p);
                        R[size_t(first + k) * Zc + z] = m;
                        L[size_t(v[k])] = q[k] + m;
                    }
                }
            }
        for (int i = 0; i < m_code.K(); ++i)
            bits[i] = L[size_t(i)] < 0.0;
    }

private:
    ldpc_code m_code;
    int m_iterations;
    detail::ldpc_layers m_layers;
};

/// BPSK-AWGN capacity and dispersion (bits per channel use) at noise variance
/// sigma2: the information density i = 1 - log2(1 + exp(-2 y / sigma2)), y ~
/// N(1, sigma2), integrated numerically.
void capacity_and_dispersion(double sigma2, double& C, double& V)
{
    const double sigma = std::sqrt(sigma2);
    const int steps = 4000;
    const double lo = 1.0 - 12.0 * sigma, hi = 1.0 + 12.0 * sigma, h = (hi - lo) / steps;
    double m1 = 0, m2 = 0;
    for (int i = 0; i <= steps; ++i) {
        const double y = lo + i * h;
        const double w = (i == 0 || i == steps) ? 0.5 : 1.0;
        const double pdf = std::exp(-0.5 * (y - 1.0) * (y - 1.0) / sigma2) /
                           std::sqrt(2.0 * M_PI * sigma2);
        const double a = -2.0 * y / sigma2; // log2(1 + e^a), stably
        const double info =
            1.0 - (a > 0 ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a))) /
                      std::log(2.0);
        m1 += w * pdf * info * h;
        m2 += w * pdf * info * info * h;
    }
    C = m1;
    V = m2 - m1 * m1;
}

/// The normal approximation of the best block error rate of (n, k) codes.
double normal_approximation(int n, int k, double sigma2)
{
    double C, V;
    capacity_and_dispersion(sigma2, C, V);
    const double x = (n * C - k + 0.5 * std::log2(double(n))) / std::sqrt(n * V);
    return 0.5 * std::erfc(x / std::sqrt(2.0));
}

struct decoder_column {
    std::string spec;
    std::unique_ptr<ldpc_decoder> dec;
    std::unique_ptr<double_sum_product> reference;
    std::vector<uint64_t> errors, blocks, iterations;
    double seconds = 0;
};

} // namespace

int main(int argc, char** argv)
{
    command_line cli("mimo_gpu_ldpc_fer",
                     "Frame error rates of the NR LDPC decoders, BPSK over AWGN, beside "
                     "the normal approximation of the finite-length limit.",
                     "Decoders: nms:S (normalized min-sum, scale S), oms:O (offset "
                     "min-sum, offset O), sp (float sum-product), sp-double (double "
                     "sum-product, the reference; CPU). A point runs until min-errors "
                     "frame errors or max-blocks blocks.");
    cli.add_option("K", "N", "information bits per code block (K')", "6144");
    cli.add_option("E", "N", "sent bits per code block (rate K'/E)", "12288");
    cli.add_option("base-graph", "N", "1 or 2", "1");
    cli.add_option("ebn0", "LIST", "Eb/N0 points in dB", "1,1.25,1.5,1.75,2");
    cli.add_option("decoders", "LIST", "decoders, see below", "sp,oms:0.5,nms:0.75");
    cli.add_option("iterations", "N", "layered iterations", "10");
    cli.add_flag("early-stop", "stop a block once its parity checks hold");
    cli.add_option("min-errors", "N", "frame errors that end a point", "100");
    cli.add_option("max-blocks", "N", "most blocks per point", "20000");
    cli.add_option("batch", "N", "blocks per decoder call", "256");
    cli.add_option("target", "FER", "FER of the crossing table", "0.01");
    cli.add_option("backend", "NAME", "auto, cpu or cuda", "auto");
    cli.add_option("seed", "N", "seed of bits and noise", "1");
    cli.add_option("json", "FILE", "also write the results as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        const int K_prime = int(cli.integer("K", 1, 8448));
        const int E = int(cli.integer("E", 1, 1 << 20));
        const int bg = int(cli.integer("base-graph", 1, 2));
        const int iterations = int(cli.integer("iterations", 1, 100));
        const bool early = cli.flag("early-stop").value_or(false);
        const uint64_t min_errors = uint64_t(cli.integer("min-errors", 1, 1LL << 40));
        const uint64_t max_blocks = uint64_t(cli.integer("max-blocks", 1, 1LL << 40));
        const int batch = int(cli.integer("batch", 1, 100000));
        const double target = cli.real("target");
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        const std::vector<double> ebn0 = number_list(cli.text("ebn0"));
        const backend be = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        // One code block: the smallest Zc that holds K'.
        nr_segmentation s;
        s.base_graph = bg;
        s.K_prime = K_prime;
        s.Kb = bg == 1 ? 22 : 10;
        s.Zc = 0;
        for (int z : ldpc_lifting_sizes())
            if (s.Kb * z >= K_prime) {
                s.Zc = z;
                break;
            }
        if (s.Zc == 0)
            throw usage_error("--K: no lifting size holds " + std::to_string(K_prime));
        s.K = s.Kb * s.Zc;
        s.F = s.K - K_prime;
        s.N = (bg == 1 ? 66 : 50) * s.Zc;
        const ldpc_code code = s.code();
        const nr_rate_matcher rm =
            checked_setup([&] { return nr_rate_matcher(s, E, 1); });
        const double R = double(K_prime) / E;
        std::vector<decoder_column> columns;
        for (const std::string& spec : split(cli.text("decoders"))) {
            decoder_column c;
            c.spec = spec;
            ldpc_decoder_config cfg;
            cfg.iterations = iterations;
            cfg.early_termination = early;
            const std::string name = spec.substr(0, spec.find(':'));
            const bool has_value = spec.find(':') != std::string::npos;
            const double value = has_value ? checked_setup([&] {
                return std::stod(spec.substr(spec.find(':') + 1));
            })
                                           : 0.0;
            if (name == "sp-double")
                c.reference = std::make_unique<double_sum_product>(code, iterations);
            else {
                if (name == "nms") {
                    cfg.algorithm = ldpc_algorithm::normalized_min_sum;
                    if (has_value)
                        cfg.scale = float(value);
                } else if (name == "oms") {
                    cfg.algorithm = ldpc_algorithm::offset_min_sum;
                    if (has_value)
                        cfg.offset = float(value);
                } else if (name == "sp")
                    cfg.algorithm = ldpc_algorithm::sum_product;
                else
                    throw usage_error("--decoders: unknown decoder '" + spec +
                                      "' (nms:S, oms:O, sp, sp-double)");
                c.dec = checked_setup(
                    [&] { return std::make_unique<ldpc_decoder>(code, cfg, be); });
            }
            c.errors.assign(ebn0.size(), 0);
            c.blocks.assign(ebn0.size(), 0);
            c.iterations.assign(ebn0.size(), 0);
            columns.push_back(std::move(c));
        }
        std::printf("K' = %d (BG%d, Zc = %d, K = %d, %d filler), E = %d sent bits, rate "
                    "%.4f, %d layered iterations%s, backend %s\n",
                    K_prime,
                    bg,
                    s.Zc,
                    s.K,
                    s.F,
                    E,
                    R,
                    iterations,
                    early ? " (early stop)" : " (no early stop)",
                    to_string(be).c_str());
        const ldpc_encoder enc(code);
        const int n = code.codeword_bits();
        const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
        std::vector<double> na(ebn0.size());
        for (size_t p = 0; p < ebn0.size(); ++p) {
            const double sigma2 = 1.0 / (2.0 * R * std::pow(10.0, ebn0[p] / 10.0));
            na[p] = normal_approximation(E, K_prime, sigma2);
            std::vector<uint8_t> c(size_t(batch) * s.K), bits(size_t(batch) * s.K);
            std::vector<float> llr(size_t(batch) * n);
            for (uint64_t done = 0; done < max_blocks;) {
                bool all_enough = true;
                for (const auto& col : columns)
                    all_enough &= col.errors[p] >= min_errors;
                if (all_enough)
                    break;
                const int count = int(std::min<uint64_t>(batch, max_blocks - done));
                std::vector<std::thread> pool;
                for (unsigned t = 0; t < threads; ++t)
                    pool.emplace_back([&, t] {
                        std::vector<uint8_t> d(size_t(s.N)), f(static_cast<size_t>(E));
                        std::vector<float> fl(static_cast<size_t>(E)), soft(size_t(s.N));
                        for (int b = int(t); b < count; b += int(threads)) {
                            std::seed_seq seq{ seed, uint64_t(p), done + uint64_t(b) };
                            std::mt19937_64 rng(seq);
                            std::normal_distribution<double> noise(0.0,
                                                                   std::sqrt(sigma2));
                            uint8_t* cb = c.data() + size_t(b) * s.K;
                            for (int i = 0; i < s.K; ++i)
                                cb[i] = i < K_prime ? uint8_t(rng() >> 63) : 0;
                            enc.encode(cb, d.data());
                            rm.match(d.data(), 0, f.data());
                            for (int i = 0; i < E; ++i)
                                fl[size_t(i)] = float(
                                    2.0 * ((f[size_t(i)] ? -1.0 : 1.0) + noise(rng)) /
                                    sigma2);
                            std::fill(soft.begin(), soft.end(), 0.0f);
                            rm.dematch(fl.data(), 0, soft.data());
                            float* x = llr.data() + size_t(b) * n;
                            std::fill(x, x + 2 * s.Zc, 0.0f);
                            for (int k = 0; k < s.N; ++k)
                                x[2 * s.Zc + k] =
                                    rm.is_filler(k) ? 1e4f : soft[size_t(k)];
                        }
                    });
                for (auto& th : pool)
                    th.join();
                for (auto& col : columns) {
                    const auto start = std::chrono::steady_clock::now();
                    if (col.dec) {
                        const auto r =
                            col.dec->decode(llr.data(), size_t(count), bits.data());
                        for (const auto& x : r)
                            col.iterations[p] += uint64_t(x.iterations);
                    } else {
                        std::vector<std::thread> ref;
                        for (unsigned t = 0; t < threads; ++t)
                            ref.emplace_back([&, t] {
                                for (int b = int(t); b < count; b += int(threads))
                                    col.reference->decode(llr.data() + size_t(b) * n,
                                                          bits.data() + size_t(b) * s.K);
                            });
                        for (auto& th : ref)
                            th.join();
                        col.iterations[p] += uint64_t(count) * uint64_t(iterations);
                    }
                    col.seconds += std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - start)
                                       .count();
                    for (int b = 0; b < count; ++b)
                        col.errors[p] +=
                            !std::equal(c.begin() + size_t(b) * s.K,
                                        c.begin() + size_t(b) * s.K + K_prime,
                                        bits.begin() + size_t(b) * s.K);
                    col.blocks[p] += uint64_t(count);
                }
                done += uint64_t(count);
            }
            std::printf("Eb/N0 %5.2f dB:", ebn0[p]);
            for (const auto& col : columns)
                std::printf("  %s FER %.4e (%llu/%llu)",
                            col.spec.c_str(),
                            double(col.errors[p]) / double(col.blocks[p]),
                            (unsigned long long)col.errors[p],
                            (unsigned long long)col.blocks[p]);
            std::printf("  normal approximation %.4e\n", na[p]);
            std::fflush(stdout);
        }
        // Eb/N0 at the target FER: each decoder, and the normal approximation
        // (bisection on its smooth curve).
        double lo = -2.0, hi = 10.0;
        for (int i = 0; i < 60; ++i) {
            const double mid = 0.5 * (lo + hi);
            const double sigma2 = 1.0 / (2.0 * R * std::pow(10.0, mid / 10.0));
            (normal_approximation(E, K_prime, sigma2) > target ? lo : hi) = mid;
        }
        const double na_crossing = 0.5 * (lo + hi);
        std::printf("\n%-12s %18s %12s %16s %14s\n",
                    "decoder",
                    "Eb/N0 at FER",
                    "gap to NA",
                    "mean iterations",
                    "ms per block");
        for (const auto& col : columns) {
            std::vector<double> fer;
            uint64_t blocks = 0, its = 0;
            for (size_t p = 0; p < ebn0.size(); ++p) {
                fer.push_back(double(col.errors[p]) /
                              double(std::max<uint64_t>(1, col.blocks[p])));
                blocks += col.blocks[p];
                its += col.iterations[p];
            }
            const double at = crossing(ebn0, fer, target);
            std::printf("%-12s %15.3f dB %9.3f dB %16.2f %14.3f\n",
                        col.spec.c_str(),
                        at,
                        at - na_crossing,
                        double(its) / double(blocks),
                        1e3 * col.seconds / double(blocks));
        }
        std::printf("%-12s %15.3f dB  (n = %d, k = %d)\n",
                    "normal appr.",
                    na_crossing,
                    E,
                    K_prime);
        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object()
                .value("program", "mimo_gpu_ldpc_fer")
                .value("K_prime", K_prime)
                .value("E", E)
                .value("base_graph", bg)
                .value("Zc", s.Zc)
                .value("iterations", iterations)
                .value("early_stop", early)
                .value("backend", to_string(be))
                .value("target_fer", target)
                .value("normal_approximation_ebn0_db", na_crossing)
                .begin_array("decoders");
            for (const auto& col : columns) {
                std::vector<double> fer;
                for (size_t p = 0; p < ebn0.size(); ++p)
                    fer.push_back(double(col.errors[p]) /
                                  double(std::max<uint64_t>(1, col.blocks[p])));
                j.begin_object()
                    .value("decoder", col.spec)
                    .value("ebn0_at_target_db", crossing(ebn0, fer, target))
                    .begin_array("points");
                for (size_t p = 0; p < ebn0.size(); ++p)
                    j.begin_object()
                        .value("ebn0_db", ebn0[p])
                        .value("fer", fer[p])
                        .value("errors", (unsigned long long)col.errors[p])
                        .value("blocks", (unsigned long long)col.blocks[p])
                        .value("normal_approximation", na[p])
                        .end_object();
                j.end_array().end_object();
            }
            j.end_array().end_object();
            out << "\n";
        }
        return 0;
    });
}
