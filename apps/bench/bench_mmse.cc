// mimo_gpu_bench --mmse-paper (bench_mmse.h). Method as the other tables
// (docs/benchmarks.md): the PCIe floor first, kernels by CUDA events (median
// of trials), pipelines by the host clock over a steady run with every slot
// busy (each finished frame collected and replaced at once).
#include "bench_mmse.h"
#include "bench_util.h"

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_pipeline.h>
#include <mimo_gpu/detector_registry.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace mimo_gpu;

namespace mimo_gpu_apps {

namespace {

constexpr int k_paper_subcarriers = 128;
constexpr int k_nr_subcarriers = 3276,
              k_nr_symbols = 14; // 100 MHz at 30 kHz, one slot (0.5 ms)
constexpr modulation k_mod = modulation::qam16;

struct paper_table1_row {
    int B, U, symbols;
    double chol_k, chol_km, cg_k, cg_km; // Mbit/s, GTX 980 Ti
};
const paper_table1_row k_table1[] = {
    { 128, 16, 8, 88.92, 61.80, 106.74, 71.58 },
    { 128, 16, 16, 106.56, 78.39, 127.87, 88.86 },
    { 128, 16, 32, 118.19, 90.74, 144.51, 102.65 },
    { 128, 16, 64, 130.45, 102.51, 155.02, 113.93 },
    { 256, 32, 2, 36.98, 16.96, 39.10, 20.31 },
    { 256, 32, 4, 43.63, 24.98, 49.16, 28.97 },
    { 256, 32, 8, 52.14, 34.02, 57.76, 39.37 },
    { 256, 32, 16, 54.15, 40.82, 58.09, 45.78 },
};

/// Host memory the GPU copies by DMA (pinned) where CUDA is used.
template <typename T>
class host_array
{
public:
    host_array(size_t n, bool pinned)
    {
#ifdef MIMO_GPU_HAVE_CUDA
        if (pinned) {
            m_pinned.reset(new cuda_array<T>(n, true));
            m_data = m_pinned->p;
            return;
        }
#endif
        (void)pinned;
        m_vector.resize(n);
        m_data = m_vector.data();
    }
    T* data() const { return m_data; }

private:
    std::vector<T> m_vector;
#ifdef MIMO_GPU_HAVE_CUDA
    std::unique_ptr<cuda_array<T>> m_pinned;
#endif
    T* m_data = nullptr;
};

/// A frame: C channels (i.i.d. Rayleigh) and S symbols each, 16-QAM at 10 dB per user.
struct frame_data {
    size_t C;
    int S, B, U;
    float n0;
    host_array<cfloat> H, y;
    frame_data(int b, int u, size_t channels, int symbols, bool pinned, uint64_t seed)
        : C(channels),
          S(symbols),
          B(b),
          U(u),
          n0(noise_variance_from_snr_db(10.0)),
          H(channels * b * u, pinned),
          y(channels * symbols * b, pinned)
    {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> g(0.0f, std::sqrt(0.5f));
        const constellation con(k_mod);
        for (size_t i = 0; i < C * B * U; ++i)
            H.data()[i] = cfloat(g(rng), g(rng));
        std::vector<cfloat> s(U);
        const float sigma = std::sqrt(n0);
        for (size_t p = 0; p < C * S; ++p) {
            for (int t = 0; t < U; ++t)
                s[t] = con.point(uint32_t(rng() % con.order()));
            const cfloat* h = H.data() + (p / S) * B * U;
            for (int r = 0; r < B; ++r) {
                cfloat v(g(rng) * sigma, g(rng) * sigma);
                for (int t = 0; t < U; ++t)
                    v += h[r * U + t] * s[t];
                y.data()[p * B + r] = v;
            }
        }
    }
    double bits() const
    {
        return double(C) * S * U * constellation(k_mod).bits_per_symbol();
    }
    double bytes_in() const { return double(C) * B * U * 8 + double(C) * S * B * 8; }
    double bytes_out() const
    {
        return double(C) * S * U * constellation(k_mod).bits_per_symbol() * 4;
    }
};

struct mode {
    std::string name;   // "mmse" or "mmse_cg"
    int iterations = 0; // CG
    std::string label() const
    {
        return iterations ? "cg@" + std::to_string(iterations) : "chol";
    }
};

detector_config config_of(const mode& m, int B, int U, bool library)
{
    detector_config c{ { B, U }, k_mod, { { "cublas", library ? 1.0 : 0.0 } } };
    if (m.iterations)
        c.parameters["iterations"] = m.iterations;
    return c;
}

struct pipeline_figures {
    double frame_ms = -1, latency_ms = -1, spread = -1;
};

/// Frames through a pipeline for about `seconds`, every slot busy; per-frame
/// time (1 / throughput) and the median latency.
pipeline_figures run_pipeline(const pipeline_config& pc,
                              const std::vector<std::unique_ptr<frame_data>>& frames,
                              double seconds)
{
    detector_pipeline pipe(pc);
    const size_t window = pipe.slots();
    const size_t llrs = frames[0]->C * frames[0]->S * size_t(pc.config.shape.nt) *
                        size_t(constellation(k_mod).bits_per_symbol());
    std::vector<host_array<float>> out;
    for (size_t k = 0; k < window + 1; ++k)
        out.emplace_back(llrs, pipe.active_backend() == backend::cuda);
    size_t submitted = 0;
    auto submit = [&] {
        const frame_data& f = *frames[submitted % frames.size()];
        pipe.submit(
            f.H.data(), f.y.data(), f.C, f.n0, out[submitted % out.size()].data());
        ++submitted;
    };
    for (size_t k = 0; k < 2 * window; ++k) { // warm-up
        if (pipe.pending() == window)
            pipe.collect();
        submit();
    }
    while (pipe.pending() > 0)
        pipe.collect();
    std::vector<double> latency;
    const auto start = std::chrono::steady_clock::now();
    const size_t first = submitted;
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    };
    while (elapsed() < seconds || submitted - first < 4 * window) {
        if (pipe.pending() == window)
            latency.push_back(pipe.collect().latency_ms);
        submit();
    }
    while (pipe.pending() > 0)
        latency.push_back(pipe.collect().latency_ms);
    pipeline_figures f;
    f.frame_ms = elapsed() * 1e3 / double(submitted - first);
    f.latency_ms = median(latency);
    return f;
}

/// run_pipeline `repeats` times: the median per-frame time and latency, and the
/// spread of the per-frame times ((max - min) / median) that says how steady they are.
pipeline_figures repeat_pipeline(const pipeline_config& pc,
                                 const std::vector<std::unique_ptr<frame_data>>& frames,
                                 double seconds,
                                 int repeats)
{
    std::vector<double> frame, latency;
    for (int k = 0; k < std::max(1, repeats); ++k) {
        const pipeline_figures f = run_pipeline(pc, frames, seconds);
        frame.push_back(f.frame_ms);
        latency.push_back(f.latency_ms);
    }
    pipeline_figures out;
    out.frame_ms = median(frame);
    out.latency_ms = median(latency);
    out.spread = (*std::max_element(frame.begin(), frame.end()) -
                  *std::min_element(frame.begin(), frame.end())) /
                 out.frame_ms;
    return out;
}

/// K: the detector's device path on device-resident frames, CUDA events (median).
double kernel_ms(const mode& m, const frame_data& f, bool library, int trials)
{
#ifdef MIMO_GPU_HAVE_CUDA
    auto det = make_detector(m.name, config_of(m, f.B, f.U, library), backend::cuda);
    det->set_bad_problem_policy(bad_problem_policy::erase);
    const size_t hn = f.C * f.B * f.U, yn = f.C * f.S * f.B,
                 ln = f.C * f.S * size_t(det->llrs_per_problem());
    cuda_array<cfloat> dH(hn, false), dy(yn, false);
    cuda_array<float> dl(ln, false);
    BENCH_CHECK(
        cudaMemcpy(dH.p, f.H.data(), hn * sizeof(cfloat), cudaMemcpyHostToDevice));
    BENCH_CHECK(
        cudaMemcpy(dy.p, f.y.data(), yn * sizeof(cfloat), cudaMemcpyHostToDevice));
    cudaStream_t s;
    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    detector_input in;
    in.H = dH.p;
    in.y = dy.p;
    in.channels = f.C;
    in.symbols_per_channel = f.S;
    in.n0 = f.n0;
    const double ms = kernel_median_ms(
        s, trials, 10, false, [&](int) { det->detect_device(in, dl.p, s); });
    det->check_device_status(s);
    BENCH_CHECK(cudaStreamDestroy(s));
    return ms;
#else
    (void)m, (void)f, (void)library, (void)trials;
    return -1;
#endif
}

/// Whole detect() calls from host memory to host memory, median: on CUDA the
/// single-stream K+M of the paper's Table I (copies in, kernels, copies out,
/// one after another on the detector's stream, from pinned memory); on the
/// CPU the detection itself.
double
host_path_ms(const mode& m, const frame_data& f, bool library, backend b, int trials)
{
    auto det = make_detector(m.name, config_of(m, f.B, f.U, library), b);
    host_array<float> llr(f.C * f.S * size_t(det->llrs_per_problem()),
                          b == backend::cuda);
    detector_input in;
    in.H = f.H.data();
    in.y = f.y.data();
    in.channels = f.C;
    in.symbols_per_channel = f.S;
    in.n0 = f.n0;
    return host_median_ms(trials, [&](int) { det->detect(in, llr.data()); });
}

mmse_row row_of(const std::string& table,
                const mode& m,
                bool library,
                const frame_data& f,
                int slots,
                int gpus,
                const mmse_bench_options& o)
{
    mmse_row r;
    r.table = table;
    r.mode = m.label();
    r.implementation = library ? "cublas" : "hand";
    r.B = f.B;
    r.U = f.U;
    r.subcarriers = int(f.C);
    r.symbols = f.S;
    r.slots = slots;
    r.gpus = gpus;
    r.bits = f.bits();
    r.bytes_in = f.bytes_in();
    r.bytes_out = f.bytes_out();
    if (o.h2d_bandwidth >
        0) // distinct GPUs are assumed to have links of their own, as device 0's
        r.floor_ms =
            std::max(r.bytes_in / o.h2d_bandwidth, r.bytes_out / o.d2h_bandwidth) * 1e3 /
            gpus;
    return r;
}

std::vector<std::unique_ptr<frame_data>>
make_frames(int B, int U, size_t C, int S, bool pinned, uint64_t seed)
{
    std::vector<std::unique_ptr<frame_data>> frames;
    for (int k = 0; k < 2; ++k) // rotated, so caches do not flatter
        frames.emplace_back(new frame_data(B, U, C, S, pinned, seed + 7919 * k));
    return frames;
}

pipeline_config pipeline_of(const mode& m,
                            const frame_data& f,
                            bool library,
                            std::vector<int> devices,
                            int slots,
                            backend b)
{
    pipeline_config pc;
    pc.detector = m.name;
    pc.config = config_of(m, f.B, f.U, library);
    pc.devices = std::move(devices);
    pc.slots_per_device = slots;
    pc.max_channels = f.C;
    pc.symbols_per_channel = f.S;
    pc.requested = b;
    return pc;
}

} // namespace

std::vector<mmse_row> bench_mmse_paper(const mmse_bench_options& o)
{
    const bool cuda = o.backend == backend::cuda;
    std::vector<mmse_row> rows;
    // Table I: a single stream, kernel alone and with its copies; hand kernels and
    // cuBLAS/cuSOLVER.
    for (const paper_table1_row& p : k_table1) {
        const auto frames = make_frames(
            p.B, p.U, k_paper_subcarriers, p.symbols, cuda, o.seed + p.B + p.symbols);
        for (const mode& m : { mode{ "mmse", 0 }, mode{ "mmse_cg", p.U == 16 ? 3 : 4 } })
            for (bool library : { false, true }) {
                if (library && !cuda)
                    continue;
                std::fprintf(stderr,
                             "  MMSE %dx%d N_sym=%d %s %s single stream ...\n",
                             p.B,
                             p.U,
                             p.symbols,
                             m.label().c_str(),
                             library ? "cuBLAS" : "hand");
                mmse_row r = row_of("single_stream", m, library, *frames[0], 1, 1, o);
                r.paper_k_mbps = m.iterations ? p.cg_k : p.chol_k;
                r.paper_km_mbps = m.iterations ? p.cg_km : p.chol_km;
                if (cuda)
                    r.kernel_ms = kernel_ms(m, *frames[0], library, o.trials);
                r.frame_ms = host_path_ms(m,
                                          *frames[0],
                                          library,
                                          o.backend,
                                          cuda ? o.trials : std::max(3, o.trials / 5));
                rows.push_back(r);
            }
    }
    if (!cuda)
        return rows;
    // Table II: 128x16 frames pipelined over in-flight slots, one GPU and then every
    // listed one.
    for (int S : { 8, 16, 32, 64 }) {
        const auto frames =
            make_frames(128, 16, k_paper_subcarriers, S, true, o.seed + 31 * S);
        for (const mode& m : { mode{ "mmse", 0 }, mode{ "mmse_cg", 3 } })
            for (int slots : { 2, 4, 8 }) {
                std::vector<std::vector<int>> lists{ { o.devices[0] } };
                if (o.devices.size() > 1)
                    lists.push_back(o.devices);
                for (const auto& devices : lists)
                    for (bool library : { false, true }) {
                        if (library && (slots != 4 || devices.size() > 1))
                            continue; // the library path at one point of the table
                        std::fprintf(
                            stderr,
                            "  MMSE 128x16 N_sym=%d %s %s, %d slots on %zu GPU(s) ...\n",
                            S,
                            m.label().c_str(),
                            library ? "cuBLAS" : "hand",
                            slots,
                            devices.size());
                        std::vector<int> distinct = devices;
                        std::sort(distinct.begin(), distinct.end());
                        distinct.erase(std::unique(distinct.begin(), distinct.end()),
                                       distinct.end());
                        mmse_row r = row_of("pipelined",
                                            m,
                                            library,
                                            *frames[0],
                                            slots,
                                            int(distinct.size()),
                                            o);
                        r.workers = int(devices.size());
                        if (S == 8 && slots == 8 && devices.size() == 1) {
                            r.paper_km_mbps = m.iterations ? 148.67 : 131.62;
                            r.paper_latency_ms = m.iterations ? 3.54 : 3.98;
                        }
                        if (S == 16 && slots == 4 && r.gpus == 2) {
                            r.paper_km_mbps = m.iterations ? 286.57 : 265.94;
                            r.paper_latency_ms = m.iterations ? 3.66 : 3.94;
                        }
                        const pipeline_figures pf = repeat_pipeline(
                            pipeline_of(
                                m, *frames[0], library, devices, slots, o.backend),
                            frames,
                            o.seconds_per_point,
                            o.repeats);
                        r.frame_ms = pf.frame_ms;
                        r.frame_spread = pf.spread;
                        r.latency_ms = pf.latency_ms;
                        rows.push_back(r);
                    }
            }
    }
    // NR-sized frames: one slot of 14 symbols over 3276 subcarriers (0.5 ms of air time).
    if (o.nr_frames)
        for (int B : { 64, 128 }) {
            const auto frames =
                make_frames(B, 16, k_nr_subcarriers, k_nr_symbols, true, o.seed + 17 * B);
            for (const mode& m : { mode{ "mmse", 0 }, mode{ "mmse_cg", 3 } })
                for (bool library : { false, true }) {
                    std::fprintf(stderr,
                                 "  MMSE %dx16 NR frame %s %s ...\n",
                                 B,
                                 m.label().c_str(),
                                 library ? "cuBLAS" : "hand");
                    mmse_row r = row_of("nr_frames", m, library, *frames[0], 4, 1, o);
                    r.kernel_ms = kernel_ms(m, *frames[0], library, o.trials);
                    const pipeline_figures pf = repeat_pipeline(
                        pipeline_of(
                            m, *frames[0], library, { o.devices[0] }, 4, o.backend),
                        frames,
                        o.seconds_per_point,
                        o.repeats);
                    r.frame_ms = pf.frame_ms;
                    r.frame_spread = pf.spread;
                    r.latency_ms = pf.latency_ms;
                    rows.push_back(r);
                }
        }
    return rows;
}

void print_mmse_tables(const std::vector<mmse_row>& rows, const std::string& device)
{
    auto mb = [](const mmse_row& r, double ms) {
        return fmt(ms > 0 ? mbps(size_t(r.bits), ms) : -1, "%.0f");
    };
    std::printf("\nsoft MMSE, paper Table I workloads (N_scr = 128, 16-QAM, one stream), "
                "%s; Mbit/s of detected "
                "bits; paper: GTX 980 Ti\n",
                device.c_str());
    std::printf("%-7s %5s %-6s %-6s | %9s %8s | %9s %8s %7s | %8s %8s %6s | %9s %9s\n",
                "BxU",
                "N_sym",
                "mode",
                "impl",
                "K ms",
                "K Mb/s",
                "K+M ms",
                "K+M Mb/s",
                "x paper",
                "floor ms",
                "floor Mb",
                "%floor",
                "paper K",
                "paper K+M");
    for (const mmse_row& r : rows)
        if (r.table == "single_stream")
            std::printf(
                "%3dx%-3d %5d %-6s %-6s | %9s %8s | %9s %8s %7s | %8s %8s %6s | %9s "
                "%9s\n",
                r.B,
                r.U,
                r.symbols,
                r.mode.c_str(),
                r.implementation.c_str(),
                fmt(r.kernel_ms, "%.3f").c_str(),
                mb(r, r.kernel_ms).c_str(),
                fmt(r.frame_ms, "%.3f").c_str(),
                mb(r, r.frame_ms).c_str(),
                fmt(r.frame_ms > 0 && r.paper_km_mbps > 0
                        ? mbps(size_t(r.bits), r.frame_ms) / r.paper_km_mbps
                        : -1,
                    "%.1fx")
                    .c_str(),
                fmt(r.floor_ms, "%.3f").c_str(),
                mb(r, r.floor_ms).c_str(),
                fmt(r.floor_ms > 0 && r.frame_ms > 0 ? 100 * r.floor_ms / r.frame_ms : -1,
                    "%.0f%%")
                    .c_str(),
                fmt(r.paper_k_mbps, "%.1f").c_str(),
                fmt(r.paper_km_mbps, "%.1f").c_str());
    for (const char* table : { "pipelined", "nr_frames" }) {
        bool any = false;
        for (const mmse_row& r : rows)
            any |= r.table == table;
        if (!any)
            continue;
        if (std::string(table) == "pipelined")
            std::printf("\nsoft MMSE pipelined (paper Table II: 128x16, 16-QAM, frames "
                        "of N_scr = 128 x N_sym), "
                        "throughput with copies and per-frame latency\n");
        else
            std::printf(
                "\nsoft MMSE, NR frames (3276 subcarriers x 14 symbols = one 0.5 ms slot "
                "at 100 MHz, 30 kHz), "
                "16-QAM, 4 slots in flight; real time needs <= 0.5 ms per frame\n");
        std::printf("(ms/frame: the median of repeated runs, --mmse-repeats; spread: "
                    "(max - min) / median over them)\n");
        std::printf(
            "%-7s %5s %-6s %-6s %5s %4s %4s | %9s %7s %9s %9s | %8s %6s | %9s %9s\n",
            "BxU",
            "N_sym",
            "mode",
            "impl",
            "slots",
            "wkrs",
            "GPUs",
            "ms/frame",
            "spread",
            "Mbit/s",
            "latency",
            "floor ms",
            "%floor",
            "paper Mb",
            "paper lat");
        for (const mmse_row& r : rows)
            if (r.table == table)
                std::printf("%3dx%-3d %5d %-6s %-6s %5d %4d %4d | %9s %7s %9s %9s | %8s "
                            "%6s | %9s %9s\n",
                            r.B,
                            r.U,
                            r.symbols,
                            r.mode.c_str(),
                            r.implementation.c_str(),
                            r.slots,
                            r.workers,
                            r.gpus,
                            fmt(r.frame_ms, "%.3f").c_str(),
                            fmt(r.frame_spread >= 0 ? 100 * r.frame_spread : -1, "%.1f%%")
                                .c_str(),
                            mb(r, r.frame_ms).c_str(),
                            fmt(r.latency_ms, "%.3f").c_str(),
                            fmt(r.floor_ms, "%.3f").c_str(),
                            fmt(r.floor_ms > 0 && r.frame_ms > 0
                                    ? 100 * r.floor_ms / r.frame_ms
                                    : -1,
                                "%.0f%%")
                                .c_str(),
                            fmt(r.paper_km_mbps, "%.1f").c_str(),
                            fmt(r.paper_latency_ms, "%.2f").c_str());
    }
}

void write_mmse_json(json_writer& j, const std::vector<mmse_row>& rows)
{
    j.begin_array("mmse");
    for (const mmse_row& r : rows) {
        j.begin_object();
        j.value("table", r.table)
            .value("mode", r.mode)
            .value("implementation", r.implementation);
        j.value("B", r.B)
            .value("U", r.U)
            .value("subcarriers", r.subcarriers)
            .value("symbols", r.symbols);
        j.value("slots", r.slots)
            .value("workers", r.workers)
            .value("gpus", r.gpus)
            .value("bits", r.bits);
        j.value("bytes_in", r.bytes_in).value("bytes_out", r.bytes_out);
        j.value("kernel_ms", r.kernel_ms)
            .value("kernel_Mbps",
                   r.kernel_ms > 0 ? mbps(size_t(r.bits), r.kernel_ms) : -1);
        j.value("frame_ms", r.frame_ms)
            .value("Mbps", r.frame_ms > 0 ? mbps(size_t(r.bits), r.frame_ms) : -1);
        j.value("frame_ms_spread", r.frame_spread);
        j.value("latency_ms", r.latency_ms).value("floor_ms", r.floor_ms);
        j.value("floor_fraction",
                r.floor_ms > 0 && r.frame_ms > 0 ? r.floor_ms / r.frame_ms : -1);
        j.value("paper_kernel_Mbps", r.paper_k_mbps)
            .value("paper_with_copies_Mbps", r.paper_km_mbps);
        j.value("paper_latency_ms", r.paper_latency_ms);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
