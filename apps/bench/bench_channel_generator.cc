#include "bench_channel_generator.h"

#include "bench_util.h"

#include <mimo_gpu/channel_generator.h>

#include <memory>
#include <random>

namespace mimo_gpu_apps {

using namespace mimo_gpu;

namespace {

constexpr double k_required_problems_per_s = 100e6; // the device-resident chain's target

struct workload {
    mimo_shape shape;
    modulation mod;
    int symbols_per_channel;
};

/// 64k problems per call: the batch a GNU Radio source block would hand on.
constexpr size_t k_problems = 65536;

const workload k_workloads[] = {
    { { 4, 4 }, modulation::qam16, 1 },  // the chain's case
    { { 4, 4 }, modulation::qam16, 14 }, // H held over a slot's 14 OFDM symbols
    { { 8, 8 }, modulation::qam256, 1 },
};

/// Output bytes of one problem: its bits (one byte each), y, and its share of H.
double generated_bytes(const workload& w)
{
    const int q = constellation(w.mod).bits_per_symbol();
    return double(w.shape.nt * q) + 8.0 * w.shape.nr +
           8.0 * w.shape.nr * w.shape.nt / w.symbols_per_channel;
}

channel_generator_row base_row(const workload& w, const char* operation, const char* back)
{
    channel_generator_row r;
    r.operation = operation;
    r.backend = back;
    r.nr = w.shape.nr;
    r.nt = w.shape.nt;
    r.modulation = to_string(w.mod);
    r.symbols_per_channel = w.symbols_per_channel;
    r.problems =
        k_problems / size_t(w.symbols_per_channel) * size_t(w.symbols_per_channel);
    return r;
}

#ifdef MIMO_GPU_HAVE_CUDA

/// Device-to-device copy of 256 MiB: bytes read plus written per second, median of 11.
double measure_device_bandwidth()
{
    const size_t bytes = size_t(256) << 20;
    cuda_array<char> a(bytes, false), b(bytes, false);
    cudaEvent_t e0, e1;
    BENCH_CHECK(cudaEventCreate(&e0));
    BENCH_CHECK(cudaEventCreate(&e1));
    BENCH_CHECK(cudaMemcpy(b.p, a.p, bytes, cudaMemcpyDeviceToDevice)); // warm-up
    std::vector<double> ms;
    for (int i = 0; i < 11; ++i) {
        BENCH_CHECK(cudaEventRecord(e0));
        BENCH_CHECK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice));
        BENCH_CHECK(cudaEventRecord(e1));
        BENCH_CHECK(cudaEventSynchronize(e1));
        float t = 0;
        BENCH_CHECK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 2.0 * bytes / (median(ms) * 1e-3);
}

/// Enough output sets to rotate through more memory than the L2 cache holds.
constexpr int k_sets = 8;

void bench_cuda(std::vector<channel_generator_row>& rows,
                int trials,
                int reps,
                uint64_t seed)
{
    const double bandwidth = measure_device_bandwidth();
    std::fprintf(
        stderr, "  device copy bandwidth %.0f GB/s (read + write)\n", bandwidth / 1e9);
    cudaStream_t st;
    BENCH_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const cuda_stream_t stream = reinterpret_cast<cuda_stream_t>(st);
    const float n0 = noise_variance_from_snr_db(15.0);
    for (const workload& w : k_workloads) {
        channel_generator_row r = base_row(w, "generate_device", "cuda");
        r.bytes_per_problem = generated_bytes(w);
        r.floor_ms = r.problems * r.bytes_per_problem / bandwidth * 1e3;
        std::fprintf(stderr,
                     "  channel generator %dx%d %s S=%d ...\n",
                     r.nr,
                     r.nt,
                     r.modulation.c_str(),
                     r.symbols_per_channel);
        channel_generator gen(w.shape, w.mod, seed, w.symbols_per_channel, backend::cuda);
        const size_t channels = r.problems / size_t(w.symbols_per_channel);
        std::vector<std::unique_ptr<cuda_array<uint8_t>>> bits;
        std::vector<std::unique_ptr<cuda_array<cfloat>>> H, y;
        for (int k = 0; k < k_sets; ++k) {
            bits.emplace_back(
                new cuda_array<uint8_t>(r.problems * gen.bits_per_problem(), false));
            H.emplace_back(
                new cuda_array<cfloat>(channels * w.shape.nr * w.shape.nt, false));
            y.emplace_back(new cuda_array<cfloat>(r.problems * w.shape.nr, false));
        }
        auto launch = [&](int i) { // call i draws the next channels of the stream
            gen.generate_device(uint64_t(i) * channels,
                                channels,
                                n0,
                                bits[i % k_sets]->p,
                                H[i % k_sets]->p,
                                y[i % k_sets]->p,
                                stream);
        };
        r.ms = kernel_median_ms(st, trials, reps, false, launch);
        r.graph_ms = kernel_median_ms(st, trials, reps, true, launch);
        rows.push_back(r);

        if (w.symbols_per_channel != 1)
            continue;
        // The counter on the generator's bits and LLRs of random sign.
        channel_generator_row c = base_row(w, "count_bit_errors_device", "cuda");
        const size_t n = r.problems * size_t(gen.bits_per_problem());
        c.bytes_per_problem = double(gen.bits_per_problem()) * (sizeof(float) + 1);
        c.floor_ms = c.problems * c.bytes_per_problem / bandwidth * 1e3;
        std::vector<std::unique_ptr<cuda_array<float>>> llr;
        std::vector<float> host(n);
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 4.0f);
        for (int k = 0; k < k_sets; ++k) {
            for (float& v : host)
                v = normal(rng);
            llr.emplace_back(new cuda_array<float>(n, false));
            BENCH_CHECK(cudaMemcpy(
                llr[k]->p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        }
        cuda_array<unsigned long long> count(1, false);
        BENCH_CHECK(cudaMemset(count.p, 0, sizeof(unsigned long long)));
        auto count_launch = [&](int i) {
            count_bit_errors_device(
                llr[i % k_sets]->p, bits[i % k_sets]->p, n, count.p, stream);
        };
        c.ms = kernel_median_ms(st, trials, reps, false, count_launch);
        c.graph_ms = kernel_median_ms(st, trials, reps, true, count_launch);
        rows.push_back(c);
    }
    BENCH_CHECK(cudaStreamDestroy(st));
}

#endif // MIMO_GPU_HAVE_CUDA

void bench_cpu(std::vector<channel_generator_row>& rows, int trials, uint64_t seed)
{
    const float n0 = noise_variance_from_snr_db(15.0);
    for (const workload& w : k_workloads) {
        channel_generator_row r = base_row(w, "generate", "cpu");
        r.bytes_per_problem = generated_bytes(w);
        channel_generator gen(w.shape, w.mod, seed, w.symbols_per_channel, backend::cpu);
        const size_t channels = r.problems / size_t(w.symbols_per_channel);
        std::vector<uint8_t> bits(r.problems * gen.bits_per_problem());
        std::vector<cfloat> H(channels * w.shape.nr * w.shape.nt),
            y(r.problems * w.shape.nr);
        r.ms = host_median_ms(trials, [&](int i) {
            gen.generate(
                uint64_t(i) * channels, channels, n0, bits.data(), H.data(), y.data());
        });
        rows.push_back(r);
        if (w.symbols_per_channel != 1)
            continue;
        channel_generator_row c = base_row(w, "count_bit_errors", "cpu");
        c.bytes_per_problem = double(gen.bits_per_problem()) * (sizeof(float) + 1);
        std::vector<float> llr(bits.size());
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 4.0f);
        for (float& v : llr)
            v = normal(rng);
        volatile uint64_t errors = 0;
        c.ms = host_median_ms(trials, [&](int) {
            errors = errors + count_bit_errors(llr.data(), bits.data(), llr.size());
        });
        rows.push_back(c);
    }
}

double problems_per_s(const channel_generator_row& r, double ms)
{
    return ms > 0 ? double(r.problems) / (ms * 1e-3) : -1;
}

} // namespace

std::vector<channel_generator_row>
bench_channel_generator(backend b, int trials, int reps, uint64_t seed)
{
    std::vector<channel_generator_row> rows;
#ifdef MIMO_GPU_HAVE_CUDA
    if (b == backend::cuda) {
        bench_cuda(rows, trials, reps, seed);
        return rows;
    }
#else
    (void)reps;
#endif
    (void)b;
    bench_cpu(rows, std::max(3, trials / 5), seed);
    return rows;
}

void print_channel_generator_table(const std::vector<channel_generator_row>& rows,
                                   const std::string& device)
{
    std::printf(
        "\nchannel generator and bit-error counter, %s; requirement: 100 M problems/s "
        "(a device-resident source -> detector -> counter chain); ms per call\n",
        device.c_str());
    std::printf("%-24s %-4s %-12s %3s %6s %5s | %9s %9s %10s %9s | %9s %8s %8s\n",
                "operation",
                "back",
                "config",
                "S",
                "probs",
                "B/pr",
                "ms",
                "ms graph",
                "M prob/s",
                "GB/s",
                "floor ms",
                "x floor",
                "x 100M");
    for (const channel_generator_row& r : rows) {
        const double best = r.graph_ms > 0 && r.graph_ms < r.ms ? r.graph_ms : r.ms;
        const double rate = problems_per_s(r, best);
        const double gbps =
            best > 0 ? r.problems * r.bytes_per_problem / (best * 1e-3) / 1e9 : -1;
        char config[32];
        std::snprintf(
            config, sizeof config, "%dx%d %s", r.nr, r.nt, r.modulation.c_str());
        std::printf("%-24s %-4s %-12s %3d %6zu %5.0f | %9s %9s %10s %9s | %9s %8s %8s\n",
                    r.operation.c_str(),
                    r.backend.c_str(),
                    config,
                    r.symbols_per_channel,
                    r.problems,
                    r.bytes_per_problem,
                    fmt(r.ms, "%.4f").c_str(),
                    fmt(r.graph_ms, "%.4f").c_str(),
                    fmt(rate / 1e6, "%.0f").c_str(),
                    fmt(gbps, "%.0f").c_str(),
                    fmt(r.floor_ms, "%.4f").c_str(),
                    fmt(r.floor_ms > 0 ? best / r.floor_ms : -1, "%.2f").c_str(),
                    fmt(rate / k_required_problems_per_s, "%.1f").c_str());
    }
    std::printf(
        "(M prob/s, GB/s and the ratios use the faster of the two timings; x floor: "
        "time over the byte floor, x 100M: rate over the chain's requirement)\n");
}

void write_channel_generator_json(json_writer& j,
                                  const std::vector<channel_generator_row>& rows)
{
    j.begin_array("channel_generator");
    for (const channel_generator_row& r : rows) {
        j.begin_object();
        j.value("operation", r.operation).value("backend", r.backend);
        j.value("nr", r.nr).value("nt", r.nt).value("modulation", r.modulation);
        j.value("symbols_per_channel", r.symbols_per_channel);
        j.value("problems", (unsigned long)r.problems);
        j.value("bytes_per_problem", r.bytes_per_problem);
        j.value("ms", r.ms).value("graph_ms", r.graph_ms).value("floor_ms", r.floor_ms);
        j.value("problems_per_s", problems_per_s(r, r.ms));
        j.value("graph_problems_per_s", problems_per_s(r, r.graph_ms));
        j.value("GBps",
                r.ms > 0 ? r.problems * r.bytes_per_problem / (r.ms * 1e-3) / 1e9 : -1.0);
        j.value("required_problems_per_s", k_required_problems_per_s);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
