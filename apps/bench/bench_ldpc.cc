#include "bench_ldpc.h"

#include "bench_util.h"

#include <mimo_gpu/nr_ldpc.h>
#include <mimo_gpu/nr_transport_block.h>

#include <cmath>
#include <cstring>
#include <random>

namespace mimo_gpu_apps {

using namespace mimo_gpu;

namespace {

struct ldpc_case {
    ldpc_code code;
    const char* rate;
    int E; ///< bits sent: K / rate
};

std::vector<ldpc_case> ldpc_cases()
{
    const int K1 = 22 * 384, K2 = 10 * 384;
    return { { { 1, 384 }, "1/3", 3 * K1 },
             { { 1, 384 }, "1/2", 2 * K1 },
             { { 1, 384 }, "8/9", K1 * 9 / 8 },
             { { 2, 384 }, "1/5", 5 * K2 } };
}

/// `unique` codewords of random bits, BPSK over AWGN 1 dB above the rate's
/// Shannon limit, sent as 38.212 sends them (the first 2 Zc punctured, then E
/// bits; the rest not sent, LLR 0): what a receiver hands the decoder. With a
/// fixed iteration count the values do not change the work.
std::vector<float> ldpc_input(const ldpc_case& c, size_t unique, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const ldpc_code& code = c.code;
    const size_t n = size_t(code.codeword_bits());
    const double rate = double(code.K()) / c.E;
    const double limit_db = 10.0 * std::log10((std::pow(2.0, 2.0 * rate) - 1.0));
    const double sigma2 = std::pow(10.0, -(limit_db + 1.0) / 10.0);
    ldpc_encoder enc(code);
    std::vector<uint8_t> bits(size_t(code.K())), x(n);
    std::vector<float> llr(unique * n, 0.0f);
    for (size_t b = 0; b < unique; ++b) {
        for (auto& v : bits)
            v = uint8_t(rng() >> 63);
        enc.encode_full(bits.data(), x.data());
        for (size_t v = 2 * size_t(code.Zc); v < 2 * size_t(code.Zc) + size_t(c.E); ++v)
            llr[b * n + v] = float(
                2.0 * ((x[v] ? -1.0 : 1.0) + std::sqrt(sigma2) * normal(rng)) / sigma2);
    }
    return llr;
}

/// Layers a block of this case runs (ldpc_active_rows).
int layers_of(const ldpc_case& c)
{
    const int last_column = (2 * c.code.Zc + c.E - 1) / c.code.Zc;
    const int r = last_column - c.code.info_columns() + 1;
    return std::max(4, std::min(c.code.rows(), r));
}

ldpc_bench_row row_of(const ldpc_case& c, int iterations, size_t count)
{
    ldpc_bench_row r;
    r.base_graph = c.code.base_graph;
    r.Zc = c.code.Zc;
    r.K = c.code.K();
    r.E = c.E;
    r.rate = c.rate;
    r.layers = layers_of(c);
    r.iterations = iterations;
    r.count = count;
    return r;
}

ldpc_decoder_config fixed_iterations(int iterations)
{
    ldpc_decoder_config cfg; // the default rule: offset min-sum, offset 0.5
    cfg.iterations = iterations;
    cfg.early_termination = false;
    return cfg;
}

void bench_cpu(const ldpc_bench_options& o, std::vector<ldpc_bench_row>& rows)
{
    const size_t count = o.batches.front();
    for (const ldpc_case& c : ldpc_cases()) {
        const size_t n = size_t(c.code.codeword_bits());
        const std::vector<float> unique =
            ldpc_input(c, std::min<size_t>(count, 16), o.seed);
        std::vector<float> llr(count * n);
        for (size_t b = 0; b < count; ++b)
            std::memcpy(&llr[b * n], &unique[(b % 16) * n], n * sizeof(float));
        std::vector<uint8_t> bits(count * size_t(c.code.K()));
        for (int it : o.iterations) {
            const ldpc_decoder dec(c.code, fixed_iterations(it), backend::cpu);
            ldpc_bench_row r = row_of(c, it, count);
            r.input = "float";
            r.path = "cpu";
            r.ms = host_median_ms(std::max(1, o.trials / 2), [&](int) {
                dec.decode(llr.data(), count, bits.data());
            });
            rows.push_back(r);
        }
    }
}

#ifdef MIMO_GPU_HAVE_CUDA
/// Transport blocks from received LLRs (G per block, what a detector gives)
/// to decoded bits: de-rate-matching, LDPC (10 iterations, no early stop),
/// desegmentation and CRCs on the GPU (nr_transport_block_decoder::
/// decode_device); end to end from pinned host int8 LLRs to host bits.
void bench_transport_blocks(const ldpc_bench_options& o,
                            cudaStream_t s,
                            std::vector<ldpc_bench_row>& rows)
{
    struct tb_case {
        nr_transport_block_format f;
        const char* rate;
    };
    // One code block of BG1 Zc 384 at rate 1/2; a transport block of 13.
    const tb_case cases[] = { { { 8424, 16896, 2 }, "1/2" },
                              { { 101376, 202752, 6, 4 }, "1/2" } };
    for (const tb_case& c : cases) {
        const nr_transport_block_format& f = c.f;
        const nr_segmentation seg = f.segmentation();
        ldpc_decoder_config cfg = fixed_iterations(10);
        nr_transport_block_decoder dec(f, cfg, backend::cuda);
        const size_t largest = *std::max_element(o.batches.begin(), o.batches.end());
        const size_t count =
            std::max<size_t>(1, largest / size_t(seg.C)); // ~ as many code blocks
        const size_t G = size_t(f.G), A = size_t(f.A);
        std::mt19937_64 rng(o.seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        const nr_transport_block_encoder enc(f);
        std::vector<uint8_t> a(A), g(G);
        const float sigma = 0.6f, scale = 0.25f;
        cuda_array<int8_t> h_q(count * G, true), d_q(count * G, false);
        cuda_array<float> d_llr(count * G, false);
        cuda_array<uint8_t> h_a(count * A, true), d_a(count * A, false);
        std::vector<float> llr(count * G);
        for (size_t t = 0; t < count; ++t) {
            for (auto& b : a)
                b = uint8_t(rng() >> 63);
            enc.encode(a.data(), g.data());
            for (size_t i = 0; i < G; ++i) {
                const float y = (g[i] ? -1.0f : 1.0f) + sigma * normal(rng);
                llr[t * G + i] = 2.0f * y / (sigma * sigma);
                h_q.p[t * G + i] = int8_t(std::lround(
                    std::max(-127.0f, std::min(127.0f, llr[t * G + i] / scale))));
            }
        }
        BENCH_CHECK(
            cudaMemcpy(d_llr.p, llr.data(), count * G * 4, cudaMemcpyHostToDevice));
        BENCH_CHECK(cudaMemcpy(d_q.p, h_q.p, count * G, cudaMemcpyHostToDevice));
        for (const char* input : { "float", "int8" }) {
            const bool int8 = std::strcmp(input, "int8") == 0;
            ldpc_bench_row k;
            k.base_graph = seg.base_graph;
            k.Zc = seg.Zc;
            k.K = int(A); // information bits of a transport block
            k.E = int(G);
            k.layers = seg.C; // code blocks per transport block
            k.iterations = 10;
            k.rate = c.rate;
            k.input = input;
            k.path = "tb kernel";
            k.count = count;
            k.ms = kernel_median_ms(s, o.trials, o.reps, false, [&](int) {
                if (int8)
                    dec.decode_device(d_q.p, scale, count, d_a.p, s);
                else
                    dec.decode_device(d_llr.p, count, d_a.p, s);
            });
            rows.push_back(k);
        }
        ldpc_bench_row e = rows.back();
        e.path = "tb end to end";
        e.floor_ms = o.h2d_bandwidth > 0 ? double(count * G) / o.h2d_bandwidth * 1e3 : -1;
        e.ms = host_median_ms(o.trials, [&](int) {
            BENCH_CHECK(
                cudaMemcpyAsync(d_q.p, h_q.p, count * G, cudaMemcpyHostToDevice, s));
            dec.decode_device(d_q.p, scale, count, d_a.p, s);
            BENCH_CHECK(
                cudaMemcpyAsync(h_a.p, d_a.p, count * A, cudaMemcpyDeviceToHost, s));
            dec.device_results(s);
        });
        rows.push_back(e);
    }
}

void bench_cuda(const ldpc_bench_options& o, std::vector<ldpc_bench_row>& rows)
{
    cudaStream_t s;
    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const size_t largest = *std::max_element(o.batches.begin(), o.batches.end());
    for (const ldpc_case& c : ldpc_cases()) {
        const size_t n = size_t(c.code.codeword_bits()), K = size_t(c.code.K());
        const size_t unique_count = std::min<size_t>(largest, 64);
        const std::vector<float> unique = ldpc_input(c, unique_count, o.seed);
        const float scale = 0.25f; // int8: LLR = 0.25 * value, |LLR| < 32
        cuda_array<float> h_llr(largest * n, true), d_llr(largest * n, false);
        cuda_array<int8_t> h_q(largest * n, true), d_q(largest * n, false);
        cuda_array<uint8_t> h_bits(largest * K, true), d_bits(largest * K, false);
        for (size_t b = 0; b < largest; ++b)
            for (size_t v = 0; v < n; ++v) {
                const float x = unique[(b % unique_count) * n + v];
                h_llr.p[b * n + v] = x;
                h_q.p[b * n + v] =
                    int8_t(std::lround(std::max(-127.0f, std::min(127.0f, x / scale))));
            }
        BENCH_CHECK(
            cudaMemcpy(d_llr.p, h_llr.p, largest * n * 4, cudaMemcpyHostToDevice));
        BENCH_CHECK(cudaMemcpy(d_q.p, h_q.p, largest * n, cudaMemcpyHostToDevice));
        for (int it : o.iterations) {
            ldpc_decoder dec(c.code, fixed_iterations(it), backend::cuda);
            for (size_t count : o.batches) {
                for (const char* input : { "float", "int8" }) {
                    const bool int8 = std::strcmp(input, "int8") == 0;
                    ldpc_bench_row k = row_of(c, it, count);
                    k.input = input;
                    k.path = "kernel";
                    k.ms = kernel_median_ms(s, o.trials, o.reps, false, [&](int) {
                        if (int8)
                            dec.decode_device(d_q.p, scale, count, d_bits.p, s);
                        else
                            dec.decode_device(d_llr.p, count, d_bits.p, s);
                    });
                    rows.push_back(k);

                    ldpc_bench_row e = row_of(c, it, count);
                    e.input = input;
                    e.path = "end to end";
                    const size_t bytes = count * n * (int8 ? 1 : sizeof(float));
                    e.floor_ms = o.h2d_bandwidth > 0 ? bytes / o.h2d_bandwidth * 1e3 : -1;
                    e.ms = host_median_ms(o.trials, [&](int) {
                        if (!int8) { // the host API, from pinned memory
                            dec.decode(h_llr.p, count, h_bits.p);
                            return;
                        }
                        BENCH_CHECK(cudaMemcpyAsync(
                            d_q.p, h_q.p, bytes, cudaMemcpyHostToDevice, s));
                        dec.decode_device(d_q.p, scale, count, d_bits.p, s);
                        BENCH_CHECK(cudaMemcpyAsync(
                            h_bits.p, d_bits.p, count * K, cudaMemcpyDeviceToHost, s));
                        dec.device_results(s);
                    });
                    rows.push_back(e);
                }
            }
        }
    }
    bench_transport_blocks(o, s, rows);
    cudaStreamDestroy(s);
}
#endif

} // namespace

std::vector<ldpc_bench_row> bench_ldpc(const ldpc_bench_options& o)
{
    std::vector<ldpc_bench_row> rows;
#ifdef MIMO_GPU_HAVE_CUDA
    if (o.backend == backend::cuda) {
        bench_cuda(o, rows);
        return rows;
    }
#endif
    bench_cpu(o, rows);
    return rows;
}

void print_ldpc_table(const std::vector<ldpc_bench_row>& rows, const std::string& device)
{
    std::printf(
        "\nLDPC decoder (layered offset min-sum, offset 0.5, half precision; fixed "
        "iterations, no early termination): %s; Gbit/s of decoded information bits "
        "(K per code block); best published GPU figure: 1.38 Gbit/s (RTX 2080 Ti, "
        "2024)\n",
        device.c_str());
    std::printf(
        "(tb rows: K = A information bits of a transport block, E = G received LLRs, "
        "layers = code blocks; 10 iterations)\n");
    std::printf("%2s %4s %5s %6s %6s %6s %4s | %-5s %-13s %6s | %9s %8s | %9s\n",
                "BG",
                "Zc",
                "rate",
                "K",
                "E",
                "layers",
                "it",
                "input",
                "path",
                "blocks",
                "ms",
                "Gbit/s",
                "floor ms");
    for (const ldpc_bench_row& r : rows)
        std::printf("%2d %4d %5s %6d %6d %6d %4d | %-5s %-13s %6zu | %9s %8s | %9s\n",
                    r.base_graph,
                    r.Zc,
                    r.rate.c_str(),
                    r.K,
                    r.E,
                    r.layers,
                    r.iterations,
                    r.input.c_str(),
                    r.path.c_str(),
                    r.count,
                    fmt(r.ms, "%.3f").c_str(),
                    fmt(r.Gbps(), "%.3f").c_str(),
                    fmt(r.floor_ms, "%.3f").c_str());
}

void write_ldpc_json(json_writer& j, const std::vector<ldpc_bench_row>& rows)
{
    j.begin_array("ldpc_decoder");
    for (const ldpc_bench_row& r : rows) {
        j.begin_object();
        j.value("base_graph", r.base_graph)
            .value("Zc", r.Zc)
            .value("rate", r.rate)
            .value("K", r.K)
            .value("E", r.E)
            .value("layers", r.layers)
            .value("iterations", r.iterations)
            .value("input", r.input)
            .value("path", r.path)
            .value("blocks", (long long)r.count)
            .value("ms", r.ms)
            .value("Gbps", r.Gbps())
            .value("floor_ms", r.floor_ms);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
