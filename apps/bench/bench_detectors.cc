// mimo_gpu_bench's detector tables (see bench_detectors.h). Every family is
// reached through the registry and the detector interface only: no code here
// knows a family, except the table of published figures to compare with.
#include "bench_detectors.h"

#include "bench_util.h"
#include "command_line.h"

#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace mimo_gpu_apps {

using namespace mimo_gpu;

namespace {

// The MTT thesis (../shared/papers/mtt-detector-and-lte-turbo-decoder-gpu-thesis.md),
// Tables 4.1 and 4.2, Nvidia Tesla C1060: kernel and asynchronous (8 streams
// overlapping copies and kernels) runtime in ms and throughput in Mbit/s. Its
// kernel starts from R and y' of a host QR. Its Mbit/s agree with its ms when a
// megabit is 2^20 bits (except 2x2 64-QAM, where they do not agree either way).
constexpr size_t k_thesis_2x2_problems = 8 * 16384, k_thesis_4x4_problems = 8 * 8192;
const reference_figure k_thesis_figures[] = {
    { "mtt", 2, 2, modulation::qpsk, k_thesis_2x2_problems, 0.61, 822.59, 0.75, 663.65 },
    { "mtt", 2, 2, modulation::qam16, k_thesis_2x2_problems, 3.57, 280.08, 3.70, 269.89 },
    { "mtt", 2, 2, modulation::qam64, k_thesis_2x2_problems, 39.80, 43.86, 39.97, 43.91 },
    { "mtt", 4, 4, modulation::qpsk, k_thesis_4x4_problems, 1.62, 308.40, 1.76, 284.75 },
    { "mtt", 4, 4, modulation::qam16, k_thesis_4x4_problems, 8.19, 122.03, 8.31, 120.25 },
    { "mtt",
      4,
      4,
      modulation::qam64,
      k_thesis_4x4_problems,
      124.52,
      12.05,
      124.62,
      12.04 },
};

// The FSD paper (../shared/papers/fsd-sphere-decoder-gpu.md), Tables 1 (FSD,
// hard) and 2 (SFSD), Nvidia Tesla C2070, 4x4, a slot of 7 OFDM symbols on Nc
// subcarriers: runtime in ms and Mbit/s of detected bits (they agree with
// Nc * 7 * 4 * log2 M bits, 10^6 to a megabit). One runtime per case, taken as
// both its kernel and end-to-end figure.
constexpr int k_fsd_paper_subcarriers[] = { 150, 300, 600, 900, 1200 };
struct fsd_paper_row {
    const char* family;
    modulation mod;
    double ms[5];
};
const fsd_paper_row k_fsd_paper_rows[] = {
    { "fsd", modulation::qpsk, { 0.046, 0.054, 0.078, 0.102, 0.125 } },
    { "fsd", modulation::qam16, { 0.054, 0.077, 0.126, 0.174, 0.220 } },
    { "fsd", modulation::qam64, { 0.219, 0.409, 0.772, 1.15, 1.52 } },
    { "sfsd", modulation::qpsk, { 0.115, 0.204, 0.317, 0.426, 0.535 } },
    { "sfsd", modulation::qam16, { 0.373, 0.680, 1.29, 1.94, 2.58 } },
    { "sfsd", modulation::qam64, { 2.57, 5.17, 10.40, 15.77, 21.0 } },
};

const std::vector<reference_figure>& fsd_paper_figures()
{
    static const std::vector<reference_figure> figures = [] {
        std::vector<reference_figure> v;
        for (const fsd_paper_row& r : k_fsd_paper_rows)
            for (int i = 0; i < 5; ++i) {
                const size_t problems = size_t(k_fsd_paper_subcarriers[i]) * 7;
                const double mbit =
                    double(problems) * 4 * constellation(r.mod).bits_per_symbol() / 1e6;
                v.push_back({ r.family,
                              4,
                              4,
                              r.mod,
                              problems,
                              r.ms[i],
                              mbit / (r.ms[i] * 1e-3),
                              r.ms[i],
                              mbit / (r.ms[i] * 1e-3),
                              "FSD paper, Tables 1-2",
                              "Nvidia Tesla C2070",
                              true });
            }
        return v;
    }();
    return figures;
}

const reference_figure* find_thesis_figure(const std::string& family,
                                           const detector_workload& w)
{
    for (const reference_figure& f : k_thesis_figures)
        if (family == f.family && w.shape.nr == f.nr && w.shape.nt == f.nt &&
            w.mod == f.mod)
            return &f;
    for (const reference_figure& f : fsd_paper_figures())
        if (family == f.family && w.shape.nr == f.nr && w.shape.nt == f.nt &&
            w.mod == f.mod && w.problems == f.problems)
            return &f;
    return nullptr;
}

const modulation k_thesis_modulations[] = { modulation::qpsk,
                                            modulation::qam16,
                                            modulation::qam64 };

size_t default_problems(const mimo_shape& shape)
{
    if (shape.nr == 2 && shape.nt == 2)
        return k_thesis_2x2_problems;
    return k_thesis_4x4_problems; // 4x4, and any other shape
}

std::vector<std::string> split(const std::string& text, char sep)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, sep))
        parts.push_back(part);
    if (!text.empty() && text.back() == sep)
        parts.push_back("");
    return parts;
}

long long parse_count(const std::string& text,
                      const std::string& what,
                      long long min,
                      long long max)
{
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used, 10);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || v < min || v > max)
        throw usage_error("option --shapes: " + what + " '" + text +
                          "' is not an integer in " + std::to_string(min) + ".." +
                          std::to_string(max));
    return v;
}

double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : -1.0; }

/// "123x", "12.3x", "0.123x"; "-" when not measured.
std::string times_text(double v)
{
    return fmt(v, v >= 100 ? "%.0fx" : v >= 1 ? "%.1fx" : "%.3fx");
}

std::string config_text(const detector_row& r)
{
    std::string s = std::to_string(r.w.shape.nr) + "x" + std::to_string(r.w.shape.nt) +
                    " " + to_string(r.w.mod);
    if (r.thesis && r.thesis->problems != r.w.problems)
        s += "*";
    return s;
}


/// One H per problem (S = 1), no priors.
detector_input batch_input(const cfloat* H, const cfloat* y, size_t problems)
{
    detector_input in;
    in.H = H;
    in.y = y;
    in.channels = problems;
    in.symbols_per_channel = 1;
    in.n0 = noise_variance_from_snr_db(15.0);
    return in;
}

void time_on_cpu(detector_row& r, detector& det, const detector_bench_options& o)
{
    const input_sets in(r.w.shape, r.w.mod, r.w.problems, 2, o.seed);
    std::vector<float> llr(r.w.problems * size_t(det.llrs_per_problem()));
    // Host memory only: no PCIe, no kernel, and pinned or pageable makes no difference.
    r.end_to_end_pageable_ms = r.end_to_end_pinned_ms =
        host_median_ms(std::max(3, o.trials / 5), [&](int i) {
            det.detect(batch_input(in.H[i % 2].data(), in.y[i % 2].data(), r.w.problems),
                       llr.data());
        });
}

#ifdef MIMO_GPU_HAVE_CUDA

struct owned_stream {
    cudaStream_t s = nullptr;
    owned_stream() { BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
    ~owned_stream() { cudaStreamDestroy(s); }
    owned_stream(const owned_stream&) = delete;
    owned_stream& operator=(const owned_stream&) = delete;
};

/// Ends a capture that an exception interrupted, and clears the error it left.
void abandon_capture(cudaStream_t s)
{
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
        cudaGraph_t graph = nullptr;
        cudaStreamEndCapture(s, &graph);
        if (graph)
            cudaGraphDestroy(graph);
    }
    cudaGetLastError();
    cudaStreamSynchronize(s);
    cudaGetLastError();
}

/// Time of one (warm) launch by CUDA events, to size the launches per trial.
template <typename F>
double one_launch_ms(cudaStream_t s, F&& launch)
{
    cudaEvent_t a, b;
    BENCH_CHECK(cudaEventCreate(&a));
    BENCH_CHECK(cudaEventCreate(&b));
    BENCH_CHECK(cudaEventRecord(a, s));
    launch(1);
    BENCH_CHECK(cudaEventRecord(b, s));
    BENCH_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

void time_on_cuda(detector_row& r, detector& det, const detector_bench_options& o)
{
    constexpr int sets = 8;
    const input_sets in(r.w.shape, r.w.mod, r.w.problems, sets, o.seed);
    const size_t n_llr = r.w.problems * size_t(det.llrs_per_problem());
    const staged_sets st(in);
    const auto &dH = st.dH, &dy = st.dy, &hH = st.hH, &hy = st.hy;
    cuda_array<float> d_llr(n_llr, false), h_llr(n_llr, true);
    std::vector<float> llr(n_llr);
    const owned_stream stream;
    const cudaStream_t s = stream.s;

    // Kernel: device memory to device memory. A family without a device path says
    // so with std::logic_error (std::invalid_argument, a bad input, is an error).
    bool device_path = true;
    try {
        det.detect_device(batch_input(dH[0]->p, dy[0]->p, r.w.problems), d_llr.p, s);
        det.check_device_status(s);
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::logic_error&) {
        device_path = false;
        r.note = "no device path";
    }
    if (device_path) {
        auto launch = [&](int i) {
            det.detect_device(
                batch_input(dH[i % sets]->p, dy[i % sets]->p, r.w.problems), d_llr.p, s);
        };
        // About 20 ms of launches per trial, at most max_reps (the N-way tables' --reps).
        const double once = one_launch_ms(s, launch);
        r.kernel_reps = int(
            std::clamp(std::ceil(20.0 / std::max(once, 1e-3)), 1.0, double(o.max_reps)));
        try {
            r.kernel_ms = kernel_median_ms(s, o.trials, r.kernel_reps, true, launch, [&] {
                det.check_device_status(s);
            });
            r.kernel_graph = true;
        } catch (const std::invalid_argument&) {
            throw;
        } catch (const std::exception& e) {
            abandon_capture(s);
            r.note = std::string("CUDA graph capture failed (") + e.what() +
                     "): plain stream launches";
            r.kernel_ms =
                kernel_median_ms(s, o.trials, r.kernel_reps, false, launch, [&] {
                    det.check_device_status(s);
                });
        }
        det.check_device_status(s);
    }

    // End to end, host memory to host memory: pinned buffers (used in place by the
    // CUDA engines), then pageable ones (staged).
    r.end_to_end_pinned_ms = host_median_ms(o.trials, [&](int i) {
        det.detect(batch_input(hH[i % sets]->p, hy[i % sets]->p, r.w.problems), h_llr.p);
    });
    r.end_to_end_pageable_ms = host_median_ms(o.trials, [&](int i) {
        det.detect(
            batch_input(in.H[i % sets].data(), in.y[i % sets].data(), r.w.problems),
            llr.data());
    });

    const double t_in = r.bytes_in / o.h2d_bandwidth * 1e3,
                 t_out = r.bytes_out / o.d2h_bandwidth * 1e3;
    r.floor_overlapped_ms = std::max(t_in, t_out);
    r.floor_serial_ms = t_in + t_out;
}

#endif // MIMO_GPU_HAVE_CUDA

detector_row bench_one(const detector_spec& spec,
                       const detector_workload& w,
                       const detector_bench_options& o)
{
    detector_row r;
    r.spec = spec;
    r.label = spec.label();
    r.w = w;
    r.thesis = find_thesis_figure(spec.name, w);
    const constellation c(w.mod);
    r.bits = w.problems * size_t(w.shape.nt) * size_t(c.bits_per_symbol());
    r.bytes_in =
        double(w.problems) * (w.shape.nr * w.shape.nt + w.shape.nr) * sizeof(cfloat);
    r.bytes_out = double(w.problems) * w.shape.nt * c.bits_per_symbol() * sizeof(float);

    const detector_family& family = find_detector_family(spec.name);
    const double candidates = std::pow(double(c.order()), double(w.shape.nt));
    if (family.capabilities.exact_max_log && candidates > o.max_exhaustive) {
        char why[160];
        std::snprintf(
            why,
            sizeof why,
            "exhaustive search (exact max-log family) of M^nt = %.0f candidates > %.0f "
            "(--max-exhaustive)",
            candidates,
            o.max_exhaustive);
        r.skipped = why;
        return r;
    }
    std::unique_ptr<detector> det;
    try {
        det = make_detector(spec.name, { w.shape, w.mod, spec.parameters }, o.backend);
    } catch (const std::invalid_argument& e) {
        r.skipped = std::string("refused by the family: ") + e.what();
        return r;
    }
    r.scratch_bytes = det->scratch_bytes(w.problems);
    r.scratch_per_problem = double(r.scratch_bytes) / double(w.problems);
    std::fprintf(stderr,
                 "  %s %s, %zu problems ...\n",
                 r.label.c_str(),
                 config_text(r).c_str(),
                 w.problems);
#ifdef MIMO_GPU_HAVE_CUDA
    if (o.backend == backend::cuda) {
        time_on_cuda(r, *det, o);
        return r;
    }
#endif
    time_on_cpu(r, *det, o);
    return r;
}

} // namespace

std::vector<detector_workload> fsd_paper_workloads()
{
    std::vector<detector_workload> out;
    for (const modulation m : k_thesis_modulations)
        for (int nc : k_fsd_paper_subcarriers)
            out.push_back({ { 4, 4 }, m, size_t(nc) * 7 });
    return out;
}

std::vector<detector_workload> thesis_workloads(size_t problems)
{
    std::vector<detector_workload> out;
    for (const mimo_shape shape : { mimo_shape{ 2, 2 }, mimo_shape{ 4, 4 } })
        for (const modulation m : k_thesis_modulations)
            out.push_back({ shape, m, problems ? problems : default_problems(shape) });
    return out;
}

std::vector<detector_workload> parse_workloads(const std::string& text, size_t problems)
{
    std::vector<detector_workload> out;
    for (const std::string& item : split(text, ',')) {
        if (item.empty())
            continue;
        const std::vector<std::string> parts = split(item, ':');
        if (parts.size() > 3)
            throw usage_error("option --shapes: '" + item +
                              "' is not NRxNT[:MODULATION[:PROBLEMS]]");
        const std::string& s = parts[0];
        const size_t x = s.find_first_of("xX");
        if (x == std::string::npos)
            throw usage_error("option --shapes: '" + s + "' is not NRxNT (e.g. 4x4)");
        mimo_shape shape{
            int(parse_count(s.substr(0, x), "receive antennas", 1, k_largest_shape)),
            int(parse_count(s.substr(x + 1), "streams", 1, k_largest_shape))
        };
        checked_setup([&] { shape.validate(); });
        std::vector<modulation> mods(std::begin(k_thesis_modulations),
                                     std::end(k_thesis_modulations));
        if (parts.size() >= 2 && !parts[1].empty())
            mods = { checked_setup([&] { return modulation_from_string(parts[1]); }) };
        size_t count = problems ? problems : default_problems(shape);
        if (parts.size() == 3)
            count = size_t(parse_count(parts[2], "problem count", 1, 1 << 24));
        for (const modulation m : mods)
            out.push_back({ shape, m, count });
    }
    if (out.empty())
        throw usage_error("option --shapes: no shape in '" + text + "'");
    return out;
}

std::vector<detector_spec> parse_bench_detectors(const std::string& text)
{
    return parse_detector_list(
        text); // names, parameters and their ranges are checked there
}

std::vector<detector_row> bench_detectors(const std::vector<detector_spec>& specs,
                                          const std::vector<detector_workload>& workloads,
                                          const detector_bench_options& options)
{
    std::vector<detector_row> rows;
    for (const detector_spec& spec : specs)
        for (const detector_workload& w : workloads) {
            rows.push_back(bench_one(spec, w, options));
            if (!rows.back().skipped.empty())
                std::fprintf(stderr,
                             "  %s %s: skipped, %s\n",
                             rows.back().label.c_str(),
                             config_text(rows.back()).c_str(),
                             rows.back().skipped.c_str());
        }
    return rows;
}

namespace {

/// Whether any row has a published figure, and one at another problem count.
struct published_figures {
    bool any = false, other_count = false;
};

/// The table itself, then the skipped rows and the rows' notes.
published_figures print_rows(const std::string& title,
                             const std::vector<detector_row>& rows)
{
    std::printf("\n%s\n", title.c_str());
    std::printf("%-14s %-12s %8s | %9s %9s %7s %8s | %9s %9s %7s %8s | %9s %9s | %9s %9s "
                "%6s %6s | %8s\n",
                "detector",
                "config",
                "problems",
                "kernel ms",
                "Mbit/s",
                "thesis",
                "x thesis",
                "e2e ms",
                "Mbit/s",
                "th.e2e",
                "x thesis",
                "pageable",
                "Mbit/s",
                "floor max",
                "floor sum",
                "/max",
                "/sum",
                "scr B/pb");
    published_figures published;
    for (const detector_row& r : rows) {
        if (!r.skipped.empty())
            continue;
        const double kernel_mbps = mbps(r.bits, r.kernel_ms),
                     e2e_mbps = mbps(r.bits, r.end_to_end_pinned_ms);
        const double th_kernel = r.thesis ? r.thesis->kernel_mbps : -1,
                     th_e2e = r.thesis ? r.thesis->async_mbps : -1;
        published.any = published.any || r.thesis;
        published.other_count =
            published.other_count || (r.thesis && r.thesis->problems != r.w.problems);
        std::printf(
            "%-14s %-12s %8zu | %9s %9s %7s %8s | %9s %9s %7s %8s | %9s %9s | %9s %9s "
            "%6s %6s | %8s\n",
            r.label.c_str(),
            config_text(r).c_str(),
            r.w.problems,
            fmt(r.kernel_ms).c_str(),
            fmt(kernel_mbps, "%.1f").c_str(),
            fmt(th_kernel, "%.2f").c_str(),
            times_text(ratio(kernel_mbps, th_kernel)).c_str(),
            fmt(r.end_to_end_pinned_ms).c_str(),
            fmt(e2e_mbps, "%.1f").c_str(),
            fmt(th_e2e, "%.2f").c_str(),
            times_text(ratio(e2e_mbps, th_e2e)).c_str(),
            fmt(r.end_to_end_pageable_ms).c_str(),
            fmt(mbps(r.bits, r.end_to_end_pageable_ms), "%.1f").c_str(),
            fmt(r.floor_overlapped_ms).c_str(),
            fmt(r.floor_serial_ms).c_str(),
            fmt(ratio(r.end_to_end_pinned_ms, r.floor_overlapped_ms), "%.2f").c_str(),
            fmt(ratio(r.end_to_end_pinned_ms, r.floor_serial_ms), "%.2f").c_str(),
            fmt(r.scratch_per_problem, "%.0f").c_str());
    }
    for (const detector_row& r : rows)
        if (!r.skipped.empty())
            std::printf("  skipped %s %s: %s\n",
                        r.label.c_str(),
                        config_text(r).c_str(),
                        r.skipped.c_str());
    for (const detector_row& r : rows)
        if (r.skipped.empty() && !r.note.empty())
            std::printf("  note %s %s: %s\n",
                        r.label.c_str(),
                        config_text(r).c_str(),
                        r.note.c_str());

    return published;
}

/// What each column is.
void print_column_notes(const detector_bench_options& o)
{
    const bool cuda = o.backend == backend::cuda;
    if (cuda) {
        std::printf("  kernel: detect_device() from H and y in device memory to float "
                    "LLRs in device memory (the "
                    "QR included), 8 rotating input sets, CUDA graph of up to %d "
                    "launches (about 20 ms) per trial, "
                    "median of %d trials; '-': the family has no device path.\n",
                    o.max_reps,
                    o.trials);
        std::printf("  e2e: detect() from pinned host memory (cudaMallocHost, used in "
                    "place) to pinned host memory, "
                    "host clock, median of %d; pageable: the same from std::vector "
                    "memory (staged).\n",
                    o.trials);
        std::printf("  floor: H and y in (8 B per complex) plus float LLRs out, over the "
                    "measured pinned bandwidths "
                    "(host to device %.1f GB/s, device to host %.1f GB/s). 'floor max' "
                    "counts in and out as "
                    "overlapping (max(in, out): PCIe is full duplex), 'floor sum' as one "
                    "after the other "
                    "(in + out); /max and /sum are e2e over each.\n",
                    o.h2d_bandwidth / 1e9,
                    o.d2h_bandwidth / 1e9);
    } else {
        std::printf("  CPU backend: end to end only (detect() on host memory, median of "
                    "%d); no kernel, no PCIe "
                    "floor.\n",
                    std::max(3, o.trials / 5));
    }
    std::printf("  Mbit/s: 10^6 detected bits per second (problems * nt * log2 M).\n");
    std::printf(
        "  scr B/pb: peak scratch bytes per problem of a call of all the problems "
        "(detector::scratch_bytes: QR items, float LLRs of the int8 path; calls "
        "beyond 64 MiB of it run in parts).\n");
}

/// Where the published figures come from.
void print_published_notes(const std::vector<detector_row>& rows, bool other_count)
{
    bool mtt_thesis = false, fsd_paper = false;
    for (const detector_row& r : rows)
        if (r.skipped.empty() && r.thesis) {
            mtt_thesis |= !r.thesis->exact_problems;
            fsd_paper |= r.thesis->exact_problems;
        }
    if (mtt_thesis)
        std::printf(
            "  thesis: MTT on an Nvidia Tesla C1060 (Tables 4.1, 4.2): 'thesis' its "
            "kernel (R and y' of a host QR in), 'th.e2e' its asynchronous run (8 streams "
            "overlapping copies and kernels); its Mbit/s agree with its ms when they "
            "count "
            "2^20 bits (all but 2x2 64-QAM, which agrees neither way), so 'x thesis' is "
            "about 5%% kinder to us than a ratio of times.\n");
    if (fsd_paper)
        std::printf(
            "  thesis: the FSD paper on an Nvidia Tesla C2070 (Tables 1, 2; 4x4, Nc "
            "subcarriers x 7 OFDM symbols = problems): one runtime per case, shown as "
            "both "
            "'thesis' and 'th.e2e'; Mbit/s = problems * 4 * log2 M / runtime.\n");
    if (other_count)
        std::printf("  *: a problem count other than the thesis' (8 x 16384 for 2x2, 8 x "
                    "8192 for 4x4).\n");
}

/// The issues' goals, read off the rows with a published figure, per family.
void print_goals(const std::vector<detector_row>& rows, bool cuda)
{
    std::vector<std::string> families;
    for (const detector_row& r : rows)
        if (r.skipped.empty() && r.thesis &&
            std::find(families.begin(), families.end(), r.spec.name) == families.end())
            families.push_back(r.spec.name);
    for (const std::string& family : families) {
        double min_kernel = -1, max_floor_max = -1, max_floor_sum = -1;
        std::string min_kernel_at, max_floor_at;
        for (const detector_row& r : rows) {
            if (!r.skipped.empty() || !r.thesis || r.spec.name != family)
                continue;
            const double k = ratio(mbps(r.bits, r.kernel_ms), r.thesis->kernel_mbps);
            if (k > 0 && (min_kernel < 0 || k < min_kernel)) {
                min_kernel = k;
                min_kernel_at = r.label + " " + config_text(r);
            }
            const double fm = ratio(r.end_to_end_pinned_ms, r.floor_overlapped_ms);
            if (fm > max_floor_max) {
                max_floor_max = fm;
                max_floor_at = r.label + " " + config_text(r);
            }
            max_floor_sum =
                std::max(max_floor_sum, ratio(r.end_to_end_pinned_ms, r.floor_serial_ms));
        }
        if (min_kernel > 0)
            std::printf(
                "  goal %s kernel >= 100x the published one: lowest %.1fx (%s): %s\n",
                family.c_str(),
                min_kernel,
                min_kernel_at.c_str(),
                min_kernel >= 100 ? "met" : "NOT met");
        else
            std::printf("  goal %s kernel >= 100x the published one: no kernel time\n",
                        family.c_str());
        if (max_floor_max > 0)
            std::printf("  goal %s end to end <= 1.5x the PCIe floor: highest %.2fx of "
                        "floor max (%s): %s; "
                        "highest %.2fx of floor sum: %s\n",
                        family.c_str(),
                        max_floor_max,
                        max_floor_at.c_str(),
                        max_floor_max <= 1.5 ? "met" : "NOT met",
                        max_floor_sum,
                        max_floor_sum <= 1.5 ? "met" : "NOT met");
        else
            std::printf("  goal %s end to end <= 1.5x the PCIe floor: no floor (%s)\n",
                        family.c_str(),
                        cuda ? "nothing measured" : "CPU backend");
    }
}

} // namespace

void print_detector_table(const std::string& title,
                          const std::vector<detector_row>& rows,
                          const detector_bench_options& o)
{
    const published_figures published = print_rows(title, rows);
    print_column_notes(o);
    if (!published.any)
        return;
    print_published_notes(rows, published.other_count);
    print_goals(rows, o.backend == backend::cuda);
}

void write_detector_json(json_writer& j,
                         const std::string& table,
                         const std::vector<detector_row>& rows)
{
    j.begin_array("detectors");
    for (const detector_row& r : rows) {
        j.begin_object();
        j.value("table", table).value("name", r.spec.name).value("label", r.label);
        j.begin_object("parameters");
        for (const auto& [name, value] : r.spec.parameters)
            j.value(name, value);
        j.end_object();
        j.value("nr", r.w.shape.nr)
            .value("nt", r.w.shape.nt)
            .value("modulation", to_string(r.w.mod));
        j.value("problems", (unsigned long)r.w.problems).value("symbols_per_channel", 1);
        j.value("bits", (unsigned long)r.bits)
            .value("bytes_in", r.bytes_in)
            .value("bytes_out", r.bytes_out);
        if (!r.skipped.empty())
            j.value("skipped", r.skipped);
        if (!r.note.empty())
            j.value("note", r.note);
        j.value("kernel_ms", r.kernel_ms).value("kernel_Mbps", mbps(r.bits, r.kernel_ms));
        j.value("scratch_bytes_per_problem", r.scratch_per_problem)
            .value("scratch_bytes", (unsigned long)r.scratch_bytes);
        j.value("kernel_timing",
                r.kernel_ms < 0  ? "none"
                : r.kernel_graph ? "cuda_graph"
                                 : "stream");
        j.value("kernel_launches_per_trial", r.kernel_reps);
        j.value("end_to_end_pinned_ms", r.end_to_end_pinned_ms)
            .value("end_to_end_pageable_ms", r.end_to_end_pageable_ms);
        j.value("end_to_end_pinned_Mbps", mbps(r.bits, r.end_to_end_pinned_ms));
        j.value("end_to_end_pageable_Mbps", mbps(r.bits, r.end_to_end_pageable_ms));
        j.value("floor_overlapped_ms", r.floor_overlapped_ms)
            .value("floor_serial_ms", r.floor_serial_ms);
        j.value("end_to_end_over_floor_overlapped",
                ratio(r.end_to_end_pinned_ms, r.floor_overlapped_ms));
        j.value("end_to_end_over_floor_serial",
                ratio(r.end_to_end_pinned_ms, r.floor_serial_ms));
        if (r.thesis) {
            j.value("thesis_device", r.thesis->device)
                .value("thesis_source", r.thesis->source)
                .value("thesis_problems", (unsigned long)r.thesis->problems);
            j.value("thesis_kernel_ms", r.thesis->kernel_ms)
                .value("thesis_kernel_Mbps", r.thesis->kernel_mbps);
            j.value("thesis_async_ms", r.thesis->async_ms)
                .value("thesis_async_Mbps", r.thesis->async_mbps);
            j.value("kernel_x_thesis",
                    ratio(mbps(r.bits, r.kernel_ms), r.thesis->kernel_mbps));
            j.value("end_to_end_x_thesis_async",
                    ratio(mbps(r.bits, r.end_to_end_pinned_ms), r.thesis->async_mbps));
        }
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
