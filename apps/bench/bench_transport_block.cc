#include "bench_transport_block.h"

#include "bench_util.h"

#include <mimo_gpu/detector.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <cmath>
#include <random>

namespace mimo_gpu_apps {

using namespace mimo_gpu;

namespace {

struct tb_case {
    transport_block_format format;
    const char* llrs;
    double ebn0_db;
};

/// A = 6120 (B = 6144: one code block of K = 6144, no filler) at rate 1/3 and
/// ~1/2: Eb/N0 about 0.4 dB above the FER 0.1 point (the decoder stops most
/// blocks after a few iterations), and noise (no block stops early).
std::vector<tb_case> tb_cases()
{
    std::vector<tb_case> cases;
    for (transport_block_format f : { transport_block_format{ 6120, 18432, 2 },
                                      transport_block_format{ 6120, 12240, 2 } }) {
        const bool third = f.G == 18432;
        cases.push_back({ f, "awgn", third ? 1.0 : 1.6 });
        cases.push_back({ f, "noise", -3.0 });
    }
    return cases;
}

/// `count` transport blocks of random bits, BPSK over AWGN at Eb/N0 (the rate
/// A / G), LLR = 2 y / sigma^2.
std::vector<float>
tb_input(const transport_block_format& f, size_t count, double ebn0_db, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const double rate = double(f.A) / f.G;
    const float sigma2 = float(1.0 / (2.0 * rate * std::pow(10.0, ebn0_db / 10.0)));
    transport_block_encoder enc(f);
    std::vector<uint8_t> a(size_t(f.A)), coded(size_t(f.G));
    std::vector<float> llr(count * size_t(f.G));
    for (size_t t = 0; t < count; ++t) {
        for (auto& b : a)
            b = uint8_t(rng() >> 63);
        enc.encode(a.data(), coded.data());
        for (int i = 0; i < f.G; ++i)
            llr[t * f.G + i] =
                2.0f * ((coded[i] ? -1.0f : 1.0f) + std::sqrt(sigma2) * normal(rng)) /
                sigma2;
    }
    return llr;
}

void summarise(tb_device_row& r, const std::vector<transport_block_result>& results)
{
    double iterations = 0;
    r.crc_ok = 0;
    for (const auto& t : results) {
        iterations += t.max_iterations;
        r.crc_ok += t.crc_ok;
    }
    r.mean_iterations = results.empty() ? 0 : iterations / double(results.size());
}

} // namespace

std::vector<tb_device_row> bench_transport_blocks(const tb_device_options& o)
{
    std::vector<tb_device_row> rows;
    const size_t n = o.count;
    for (const tb_case& c : tb_cases()) {
        const transport_block_format& f = c.format;
        const code_block_segmentation seg = f.segmentation();
        tb_device_row base;
        base.llrs = c.llrs;
        base.A = f.A;
        base.G = f.G;
        base.Qm = f.Qm;
        base.C = seg.C;
        base.K = seg.K_plus;
        base.ebn0_db = c.ebn0_db;
        base.count = n;
        std::fprintf(stderr, "  transport blocks A=%d G=%d %s ...\n", f.A, f.G, c.llrs);
        // two input sets, rotated between calls
        const std::vector<float> llr[2] = { tb_input(f, n, c.ebn0_db, o.seed),
                                            tb_input(f, n, c.ebn0_db, o.seed + 1) };
        transport_block_decoder dec(f, turbo_decoder_config{}, o.backend);
        std::vector<uint8_t> a(n * size_t(f.A));
#ifdef MIMO_GPU_HAVE_CUDA
        if (o.backend == backend::cuda) {
            const size_t nl = n * size_t(f.G);
            cuda_array<float> h_llr0(nl, true), h_llr1(nl, true), d_llr0(nl, false),
                d_llr1(nl, false);
            cuda_array<int8_t> d_q0(nl, false), d_q1(nl, false);
            cuda_array<uint8_t> h_a(n * size_t(f.A), true), d_a(n * size_t(f.A), false);
            float* h[2] = { h_llr0.p, h_llr1.p };
            float* d[2] = { d_llr0.p, d_llr1.p };
            int8_t* dq[2] = { d_q0.p, d_q1.p };
            std::vector<int8_t> q(nl);
            for (int k = 0; k < 2; ++k) {
                std::copy(llr[k].begin(), llr[k].end(), h[k]);
                BENCH_CHECK(
                    cudaMemcpy(d[k], h[k], nl * sizeof(float), cudaMemcpyHostToDevice));
                // the detector's quantiser: q = round(L / scale), clamped to +-127
                llrs_to_int8(llr[k].data(), nl, 1.0f / o.int8_scale, q.data());
                BENCH_CHECK(cudaMemcpy(dq[k], q.data(), nl, cudaMemcpyHostToDevice));
            }
            cudaStream_t s;
            BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            const double hbm = 3.0e12; // bytes/s, about the H100's HBM
            for (const char* input : { "float", "int8" }) {
                const bool is_float = input[0] == 'f';
                tb_device_row r = base;
                r.input = input;
                r.path = "device to device";
                r.ms = kernel_median_ms(s, o.trials, 1, false, [&](int i) {
                    if (is_float)
                        dec.decode_device(d[i % 2], n, d_a.p, s);
                    else
                        dec.decode_device(dq[i % 2], o.int8_scale, n, d_a.p, s);
                });
                summarise(r, dec.device_results(s)); // of the last call's input
                r.floor_ms =
                    double(nl * (is_float ? sizeof(float) : 1) + n * f.A) / hbm * 1e3;
                rows.push_back(r);
            }
            tb_device_row r = base;
            r.input = "float";
            r.path = "host to host";
            std::vector<transport_block_result> results;
            r.ms = host_median_ms(
                o.trials, [&](int i) { results = dec.decode(h[i % 2], n, h_a.p); });
            summarise(r, results);
            r.floor_ms = double(nl * sizeof(float) + n * f.A) / o.h2d_bandwidth * 1e3;
            rows.push_back(r);
            cudaStreamDestroy(s);
            continue;
        }
#endif
        tb_device_row r = base;
        r.input = "float";
        r.path = "host to host";
        std::vector<transport_block_result> results;
        r.ms = host_median_ms(std::max(1, o.trials / 5), [&](int i) {
            results = dec.decode(llr[i % 2].data(), n, a.data());
        });
        summarise(r, results);
        rows.push_back(r);
    }
    return rows;
}

void print_transport_block_table(const std::vector<tb_device_row>& rows,
                                 const std::string& device,
                                 const tb_device_options& o)
{
    std::printf(
        "\ntransport blocks (decode_device: de-rate-matching, turbo, desegmentation, "
        "CRC24A on the GPU): %s, %zu per call, max-log-MAP, 6 iterations, early "
        "termination, default window and training; int8 scale %g; Mbit/s of "
        "information bits\n",
        device.c_str(),
        o.count,
        double(o.int8_scale));
    std::printf("%5s %6s %2s %5s %-5s %6s | %-5s %-16s | %9s %9s | %8s | %6s %6s\n",
                "A",
                "G",
                "C",
                "rate",
                "llrs",
                "Eb/N0",
                "input",
                "path",
                "ms",
                "Mbit/s",
                "floor ms",
                "iter",
                "crc ok");
    for (const tb_device_row& r : rows)
        std::printf(
            "%5d %6d %2d %5.3f %-5s %6.1f | %-5s %-16s | %9s %9s | %8s | %6.2f %6d\n",
            r.A,
            r.G,
            r.C,
            double(r.A) / r.G,
            r.llrs.c_str(),
            r.ebn0_db,
            r.input.c_str(),
            r.path.c_str(),
            fmt(r.ms, "%.3f").c_str(),
            fmt(mbps(r.count * size_t(r.A), r.ms), "%.1f").c_str(),
            fmt(r.floor_ms, "%.3f").c_str(),
            r.mean_iterations,
            r.crc_ok);
}

void write_transport_block_json(json_writer& j,
                                const std::vector<tb_device_row>& rows,
                                const tb_device_options& o)
{
    j.begin_array("transport_blocks");
    for (const tb_device_row& r : rows) {
        j.begin_object();
        j.value("A", r.A)
            .value("G", r.G)
            .value("Qm", r.Qm)
            .value("C", r.C)
            .value("K", r.K);
        j.value("code_rate", double(r.A) / r.G).value("llrs", r.llrs);
        j.value("ebn0_db", r.ebn0_db).value("input", r.input).value("path", r.path);
        j.value("int8_scale", double(o.int8_scale));
        j.value("transport_blocks_per_call", (unsigned long)r.count);
        j.value("ms_per_call", r.ms).value("floor_ms", r.floor_ms);
        j.value("info_Mbps", mbps(r.count * size_t(r.A), r.ms));
        j.value("mean_max_iterations", r.mean_iterations).value("crc_ok", r.crc_ok);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
