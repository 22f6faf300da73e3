// mimo_gpu_flowgraph_bench: a detector's throughput through a GNU Radio
// flowgraph, as users run it: vector sources of pre-drawn (H, y), repeated ->
// head -> mimo_detector -> null sink, beside the core's own end-to-end figure
// (the same detector's detect() on the same batch size, host memory to host
// memory). Any registered detector family by name.
//
// Beside each detector's figure it measures, in the same run, GNU Radio's own
// ceiling for the same streams: the same sources and heads, with the buffer
// sizes the detector's flowgraph had, into null sinks. Latency is from the
// head (where items leave the sources) to the sink, the median over the run.
//
// --chain device runs the device-resident chain instead: mimo_channel_source
// (CUDA, device buffers) -> mimo_detector (device buffers) -> ber_counter
// (device buffers), nothing crossing PCIe but the error counts, beside the
// core's own figure for the same work (generator, detect_device and the error
// count on one stream, per batch, without GNU Radio).
//
// --chain coded runs the coded chain: tb_source (a pool of LTE transport
// blocks, A = 6120: one code block of K = 6144) -> mimo_channel_source (the
// coded bits in) -> mimo_detector -> tb_stream_decoder -> ber_counter (a
// transport block per item), on device buffers with CUDA (on the host with
// --backend cpu), reporting information bits per second and the BLER, beside
// the core's own figure for the same work on one stream (generate with the
// given bits, detect_device, decode_device, count_errors_device per batch).
//
// --chain ofdm runs the receiver from antenna samples: nr host sample streams
// (vector sources, or a source paced at the sample rate for the latency) ->
// ofdm_rx -> mimo_detector -> tb_stream_decoder -> a block checker, in frames
// per second against the frames' air time, beside GNU Radio's ceiling for the
// same streams (bench_ofdm_chain.h).
//
// --bad-every K makes it a soak: every K-th pre-drawn problem is bad (a NaN in
// H, an all-zero H, an Inf in y, in turn), and the run checks that every item
// comes out, that the block erased exactly as many as were injected (the tests
// check which items: block_flowgraph.bad_problems_...), and that resident and
// device memory stay flat (sampled every few seconds); exit 1 otherwise.
#include "bench/bench_ofdm_chain.h"
#include "bench/bench_util.h"
#include "bench/flowgraph_probes.h"
#include "command_line.h"
#include "json_writer.h"

#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/mimo_channel_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/tb_source.h>
#include <gnuradio/mimo_gpu/tb_stream_decoder.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>
#include <mimo_gpu/ofdm_grid.h>

#include <condition_variable>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace mimo_gpu_apps;
namespace core = ::mimo_gpu;

namespace {

struct settings {
    core::detector_spec detector;
    core::mimo_shape shape;
    core::modulation mod;
    uint64_t problems;
    size_t distinct; // problems drawn, repeated by the sources
    int max_batch;
    long source_buffer; // min output buffer of sources and head, items (0: GNU Radio's
                        // default)
    std::string backend;
    std::string chain;  // "host": pre-drawn (H, y) from host sources; "device"
    uint64_t bad_every; // soak: every bad_every-th distinct problem is bad (0: none)
    // --chain coded
    int tb_size = 6120;     // A
    double code_rate = 0.5; // G from it, whole received vectors
    double snr_db = 14.0;
    int max_blocks = 128;       // transport blocks per decoder call
    std::string code = "turbo"; // "turbo" (LTE) or "ldpc" (NR)
};

/// Resident set size of this process in bytes (VmRSS).
size_t resident_bytes()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return size_t(std::stoull(line.substr(6))) * 1024;
    return 0;
}

/// Device memory in use on the current GPU in bytes, or 0 without one.
size_t device_bytes_used()
{
#ifdef MIMO_GPU_HAVE_CUDA
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
        return total - free_bytes;
    cudaGetLastError();
#endif
    return 0;
}

/// Makes every bad_every-th problem of the sets bad; returns how many.
size_t inject_bad_problems(input_sets& in, core::mimo_shape shape, uint64_t bad_every)
{
    const size_t m = size_t(shape.nr) * shape.nt, problems = in.y[0].size() / shape.nr;
    size_t bad = 0;
    for (size_t p = bad_every - 1; bad_every && p < problems; p += bad_every, ++bad) {
        switch (bad % 3) {
        case 0:
            in.H[0][p * m] = core::cfloat(NAN, 0.0f);
            break;
        case 1:
            std::fill_n(in.H[0].begin() + p * m, m, core::cfloat(0.0f, 0.0f));
            break;
        default:
            in.y[0][p * shape.nr] = core::cfloat(0.0f, INFINITY);
        }
    }
    return bad;
}

/// Bad problems among the first n of a stream repeating `distinct` problems.
uint64_t bad_among(uint64_t n, uint64_t distinct, uint64_t bad_every)
{
    if (!bad_every)
        return 0;
    const uint64_t per_cycle = distinct / bad_every, rest = n % distinct;
    return (n / distinct) * per_cycle + rest / bad_every;
}

/// Samples memory while a flowgraph runs.
class memory_monitor
{
public:
    explicit memory_monitor(std::chrono::seconds period)
        : m_thread([this, period] {
              // The first sample after a second of start-up (buffers allocated), then
              // one per period.
              std::unique_lock<std::mutex> lock(m_mutex);
              auto wait = std::chrono::seconds(1);
              while (!m_cv.wait_for(lock, wait, [this] { return m_stop; })) {
                  sample_locked();
                  wait = period;
              }
          })
    {
    }
    ~memory_monitor() { stop(); }
    void stop()
    {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable())
            m_thread.join();
        std::lock_guard<std::mutex> lock(m_mutex);
        sample_locked(); // the end
    }
    struct sample {
        double seconds;
        size_t rss, device;
    };
    std::vector<sample> samples() const
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_samples;
    }

private:
    void sample_locked()
    {
        m_samples.push_back(
            { std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start)
                  .count(),
              resident_bytes(),
              device_bytes_used() });
    }
    const std::chrono::steady_clock::time_point m_start =
        std::chrono::steady_clock::now();
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    std::vector<sample> m_samples;
    std::thread m_thread;
};

struct flowgraph_result {
    double seconds = 0;
    double latency_ms = 0;
    std::string active;
    uint64_t items_out = 0, erased = 0;
    long head_buffer_H = 0, head_buffer_y = 0; // items, as GNU Radio allocated them
    std::vector<memory_monitor::sample> memory;
};

constexpr uint64_t k_stamp_every = 4096;

/// The streams alone: the same sources and heads, the heads' buffers as large
/// as the detector's flowgraph had them, into null sinks.
flowgraph_result
run_ceiling(const settings& s, const input_sets& in, const flowgraph_result& with)
{
    auto tb = gr::make_top_block("mimo_gpu_flowgraph_ceiling");
    const size_t h_item = sizeof(gr_complex) * s.shape.nr * s.shape.nt,
                 y_item = sizeof(gr_complex) * s.shape.nr;
    const std::vector<gr_complex> H(in.H[0].begin(), in.H[0].end()),
        y(in.y[0].begin(), in.y[0].end());
    auto H_source = gr::blocks::vector_source_c::make(H, true, s.shape.nr * s.shape.nt);
    auto y_source = gr::blocks::vector_source_c::make(y, true, s.shape.nr);
    auto H_head = std::make_shared<stamped_head>(h_item, s.problems, k_stamp_every);
    auto y_head = std::make_shared<stamped_head>(y_item, s.problems, k_stamp_every);
    auto H_sink = gr::blocks::null_sink::make(h_item);
    auto y_sink = std::make_shared<stamped_sink>(y_item, k_stamp_every);
    if (s.source_buffer > 0) {
        H_source->set_min_output_buffer(s.source_buffer);
        y_source->set_min_output_buffer(s.source_buffer);
    }
    H_head->set_min_output_buffer(with.head_buffer_H);
    y_head->set_min_output_buffer(with.head_buffer_y);
    tb->connect(H_source, 0, H_head, 0);
    tb->connect(y_source, 0, y_head, 0);
    tb->connect(H_head, 0, H_sink, 0);
    tb->connect(y_head, 0, y_sink, 0);
    flowgraph_result r;
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.latency_ms = median_latency_ms(y_head->stamps(), y_sink->stamps());
    r.items_out = y_sink->nitems_read(0);
    r.head_buffer_H = H_head->max_output_buffer(0);
    r.head_buffer_y = y_head->max_output_buffer(0);
    return r;
}

/// `s.problems` problems through sources -> head -> detector -> null sink.
flowgraph_result run_flowgraph(const settings& s, const input_sets& in)
{
    auto tb = gr::make_top_block("mimo_gpu_flowgraph_bench");
    const std::vector<gr_complex> H(in.H[0].begin(), in.H[0].end()),
        y(in.y[0].begin(), in.y[0].end());
    auto H_source = gr::blocks::vector_source_c::make(H, true, s.shape.nr * s.shape.nt);
    auto y_source = gr::blocks::vector_source_c::make(y, true, s.shape.nr);
    auto H_head = std::make_shared<stamped_head>(
        sizeof(gr_complex) * s.shape.nr * s.shape.nt, s.problems, k_stamp_every);
    auto y_head = std::make_shared<stamped_head>(
        sizeof(gr_complex) * s.shape.nr, s.problems, k_stamp_every);
    auto det = gr::mimo_gpu::mimo_detector::make(
        s.detector.name,
        s.shape.nr,
        s.shape.nt,
        core::to_string(s.mod),
        core::format_parameter_list(s.detector.parameters),
        0.05,
        1,
        s.backend,
        s.max_batch,
        "erase");
    auto sink = std::make_shared<stamped_sink>(
        det->output_signature()->sizeof_stream_item(0), k_stamp_every);
    if (s.source_buffer > 0)
        for (gr::block_sptr b : { gr::block_sptr(H_source),
                                  gr::block_sptr(y_source),
                                  gr::block_sptr(H_head),
                                  gr::block_sptr(y_head) })
            b->set_min_output_buffer(s.source_buffer);
    tb->connect(H_source, 0, H_head, 0);
    tb->connect(y_source, 0, y_head, 0);
    tb->connect(H_head, 0, det, 0);
    tb->connect(y_head, 0, det, 1);
    tb->connect(det, 0, sink, 0);
    flowgraph_result r;
    r.active = det->active_backend();
    const auto start = std::chrono::steady_clock::now();
    {
        memory_monitor monitor(std::chrono::seconds(s.bad_every ? 5 : 3600));
        tb->run();
        monitor.stop();
        r.memory = monitor.samples();
    }
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.items_out = det->nitems_written(0);
    r.erased = det->erased_problems();
    r.latency_ms = median_latency_ms(y_head->stamps(), sink->stamps());
    r.head_buffer_H = H_head->max_output_buffer(0);
    r.head_buffer_y = y_head->max_output_buffer(0);
    return r;
}

/// The soak's verdict: every item out, as many erased as injected, memory flat
/// (from the first sample, after start-up, to the end: at most 16 MiB more).
int report_soak(const settings& s, const flowgraph_result& r)
{
    const uint64_t expected = bad_among(s.problems, s.distinct, s.bad_every);
    const auto& m = r.memory;
    const auto& first = m.front();
    const auto& last = m.back();
    size_t rss_max = 0, device_max = 0;
    for (const auto& x : m) {
        rss_max = std::max(rss_max, x.rss);
        device_max = std::max(device_max, x.device);
    }
    constexpr size_t slack = size_t(16) << 20;
    const bool all_out = r.items_out == s.problems, exact = r.erased == expected;
    const bool flat =
        last.rss <= first.rss + slack && last.device <= first.device + slack;
    std::printf("soak: %llu problems in %.1f s (%.2f M problems/s), items out %llu (%s), "
                "erased %llu "
                "of %llu injected (%s)\n",
                (unsigned long long)s.problems,
                r.seconds,
                s.problems / r.seconds / 1e6,
                (unsigned long long)r.items_out,
                all_out ? "all" : "MISSING",
                (unsigned long long)r.erased,
                (unsigned long long)expected,
                exact ? "exact" : "MISMATCH");
    std::printf("soak memory: RSS %.1f MB at %.0f s, %.1f MB at the end (max %.1f MB); "
                "device in use "
                "%.1f MB at %.0f s, %.1f MB at the end (max %.1f MB); %zu samples: %s\n",
                first.rss / 1e6,
                first.seconds,
                last.rss / 1e6,
                rss_max / 1e6,
                first.device / 1e6,
                first.seconds,
                last.device / 1e6,
                device_max / 1e6,
                m.size(),
                flat ? "flat" : "GROWING");
    const bool pass = all_out && exact && flat;
    std::printf("soak: %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

struct chain_result {
    double seconds = 0;
    uint64_t items_out = 0, bits = 0, errors = 0;
};

constexpr double k_chain_snr_db = 14.0;

/// The device-resident chain: channel source -> detector -> error counter, all
/// on device buffers.
chain_result run_device_chain(const settings& s)
{
    const int Q = core::constellation(s.mod).bits_per_symbol();
    auto tb = gr::make_top_block("mimo_gpu_device_chain");
    auto source = gr::mimo_gpu::mimo_channel_source::make(s.shape.nr,
                                                          s.shape.nt,
                                                          core::to_string(s.mod),
                                                          k_chain_snr_db,
                                                          1,
                                                          1,
                                                          s.problems,
                                                          "cuda",
                                                          s.max_batch);
    auto det = gr::mimo_gpu::mimo_detector::make(
        s.detector.name,
        s.shape.nr,
        s.shape.nt,
        core::to_string(s.mod),
        core::format_parameter_list(s.detector.parameters),
        1.0, // N0 from the source's noise_var tag
        1,
        "cuda",
        s.max_batch,
        "erase",
        true);
    auto errors = gr::mimo_gpu::ber_counter::make(s.shape.nt * Q, true);
    tb->connect(source, 0, det, 0);
    tb->connect(source, 1, det, 1);
    tb->connect(source, 2, errors, 0);
    tb->connect(det, 0, errors, 1);
    chain_result r;
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.items_out = det->nitems_written(0);
    r.bits = errors->bits();
    r.errors = errors->errors();
    return r;
}

/// The core's own figure for the same work: per batch of max_batch problems,
/// the generator, detect_device and the error count on one stream, device
/// memory throughout; the median time per batch in ms.
double core_device_chain_ms(const settings& s)
{
    core::channel_generator generator(s.shape, s.mod, 1, 1, core::backend::cuda);
    auto det = core::make_detector(
        s.detector.name, { s.shape, s.mod, s.detector.parameters }, core::backend::cuda);
    det->set_bad_problem_policy(core::bad_problem_policy::erase);
    const size_t B = size_t(s.max_batch), nr = size_t(s.shape.nr),
                 nt = size_t(s.shape.nt);
    const size_t llrs = size_t(det->llrs_per_problem());
    struct device_array {
        void* p;
        explicit device_array(size_t bytes) : p(core::allocate_device(bytes)) {}
        ~device_array() { core::free_device(p); }
    };
    device_array H(B * nr * nt * sizeof(core::cfloat)), y(B * nr * sizeof(core::cfloat)),
        bits(B * llrs), llr(B * llrs * sizeof(float)), count(sizeof(uint64_t));
    core::device_stream stream;
    const float n0 = core::noise_variance_from_snr_db(k_chain_snr_db);
    return host_median_ms(15, [&](int t) {
        generator.generate_device(uint64_t(t) * B,
                                  B,
                                  n0,
                                  static_cast<uint8_t*>(bits.p),
                                  static_cast<core::cfloat*>(H.p),
                                  static_cast<core::cfloat*>(y.p),
                                  stream.get());
        core::detector_input in;
        in.H = static_cast<const core::cfloat*>(H.p);
        in.y = static_cast<const core::cfloat*>(y.p);
        in.channels = B;
        in.n0 = n0;
        det->detect_device(in, static_cast<float*>(llr.p), stream.get());
        core::count_bit_errors_device(static_cast<const float*>(llr.p),
                                      static_cast<const uint8_t*>(bits.p),
                                      B * llrs,
                                      static_cast<unsigned long long*>(count.p),
                                      stream.get());
        stream.synchronize();
        det->check_device_status(stream.get());
    });
}

int run_device_chains(const settings& base,
                      const std::vector<core::detector_spec>& specs,
                      json_writer* json)
{
    int failures = 0;
    for (const auto& spec : specs) {
        settings s = base;
        s.detector = spec;
        const chain_result r = run_device_chain(s);
        const double core_ms = core_device_chain_ms(s);
        const double flow_mps = s.problems / r.seconds / 1e6,
                     core_mps = s.max_batch / (core_ms * 1e-3) / 1e6;
        const bool all_out = r.items_out == s.problems;
        failures += all_out ? 0 : 1;
        std::printf(
            "%s %dx%d %s, device-resident chain (channel source -> detector -> "
            "error counter, CUDA device buffers): %.1f M problems/s (%.3f s, %llu of "
            "%llu problems out, BER %.3e at %.0f dB); core generate + detect_device + "
            "count of %d problems per batch: %.1f M problems/s (%.0f%% of it)\n",
            s.detector.label().c_str(),
            s.shape.nr,
            s.shape.nt,
            core::to_string(s.mod).c_str(),
            flow_mps,
            r.seconds,
            (unsigned long long)r.items_out,
            (unsigned long long)s.problems,
            r.bits ? double(r.errors) / double(r.bits) : 0.0,
            k_chain_snr_db,
            s.max_batch,
            core_mps,
            100.0 * flow_mps / core_mps);
        if (json)
            json->begin_object()
                .value("detector", s.detector.label())
                .value("chain", "device")
                .value("flowgraph_seconds", r.seconds)
                .value("flowgraph_mproblems_per_s", flow_mps)
                .value("items_out", (unsigned long long)r.items_out)
                .value("ber", r.bits ? double(r.errors) / double(r.bits) : 0.0)
                .value("snr_db", k_chain_snr_db)
                .value("core_batch", s.max_batch)
                .value("core_ms", core_ms)
                .value("core_mproblems_per_s", core_mps)
                .value("fraction_of_core", flow_mps / core_mps)
                .end_object();
    }
    return failures;
}

/// The NR format of the same A, G, Qm and NL (--code ldpc).
core::nr_transport_block_format nr_format(const core::transport_block_format& f)
{
    return { f.A, f.G, f.Qm, f.NL };
}

/// The coded chain's transport block format: A bits on G coded bits, G the
/// smallest multiple of nt*Q at or above (A + 24) / rate; NL = nt layers.
core::transport_block_format coded_format(const settings& s)
{
    const int unit = s.shape.nt * core::constellation(s.mod).bits_per_symbol();
    core::transport_block_format f;
    f.A = s.tb_size;
    f.Qm = core::constellation(s.mod).bits_per_symbol();
    f.NL = s.shape.nt;
    f.G = int(std::ceil(double(s.tb_size + 24) / s.code_rate / unit)) * unit;
    if (s.code == "ldpc") { // 38.212's rules (the LTE struct carries A, G, Qm, NL)
        nr_format(f).validate();
    } else {
        f.validate_for_decoding();
    }
    return f;
}

struct coded_result {
    double seconds = 0;
    double steady_blocks_per_s = 0; // between 10 % and 90 % of the blocks (no start-up)
    uint64_t blocks = 0, block_errors = 0, crc_failures = 0, bit_errors = 0;
};

/// tb_source -> channel source -> detector -> transport block decoder -> counter.
coded_result
run_coded_chain(const settings& s, const core::transport_block_format& f, uint64_t blocks)
{
    const bool cuda = s.backend != "cpu";
    const std::string backend = cuda ? "cuda" : "cpu";
    const int unit = s.shape.nt * core::constellation(s.mod).bits_per_symbol();
    auto tb = gr::make_top_block("mimo_gpu_coded_chain");
    auto source = gr::mimo_gpu::tb_source::make(
        f.A, f.G, f.Qm, f.NL, 0, 1, 64, blocks, backend, cuda, s.code);
    auto channel =
        gr::mimo_gpu::mimo_channel_source::make(s.shape.nr,
                                                s.shape.nt,
                                                core::to_string(s.mod),
                                                s.snr_db,
                                                1,
                                                1,
                                                0,
                                                backend,
                                                std::max(s.max_batch, f.G / unit),
                                                cuda,
                                                f.G);
    auto det = gr::mimo_gpu::mimo_detector::make(
        s.detector.name,
        s.shape.nr,
        s.shape.nt,
        core::to_string(s.mod),
        core::format_parameter_list(s.detector.parameters),
        1.0,
        1,
        backend,
        s.max_batch,
        "erase",
        cuda);
    auto decoder = gr::mimo_gpu::tb_stream_decoder::make(f.A,
                                                         f.G,
                                                         f.Qm,
                                                         f.NL,
                                                         0,
                                                         unit,
                                                         "",
                                                         0,
                                                         0.75,
                                                         64,
                                                         backend,
                                                         s.max_blocks,
                                                         cuda,
                                                         s.code);
    auto counter = gr::mimo_gpu::ber_counter::make(f.A, cuda, "hard");
    tb->connect(source, 0, channel, 0);
    tb->connect(channel, 0, det, 0);
    tb->connect(channel, 1, det, 1);
    tb->connect(det, 0, decoder, 0);
    tb->connect(source, 1, counter, 0);
    tb->connect(decoder, 0, counter, 1);
    // The channel's bits output stays unconnected: the counter checks the
    // information bits.
    coded_result r;
    // The counter's progress, sampled: the steady rate leaves out the start-up
    // (buffers, first-call allocations) and the drain.
    std::vector<std::pair<double, uint64_t>> samples;
    std::atomic<bool> done{ false };
    const auto start = std::chrono::steady_clock::now();
    auto seconds_since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
            .count();
    };
    std::thread sampler([&] {
        while (!done) {
            samples.emplace_back(seconds_since(start), counter->items());
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    tb->run();
    r.seconds = seconds_since(start);
    done = true;
    sampler.join();
    const auto at = [&](double fraction) {
        return std::find_if(samples.begin(), samples.end(), [&](const auto& x) {
            return double(x.second) >= fraction * double(blocks);
        });
    };
    const auto from = at(0.1), to = at(0.9);
    if (from != samples.end() && to != samples.end() && to->first > from->first)
        r.steady_blocks_per_s =
            double(to->second - from->second) / (to->first - from->first);
    r.blocks = counter->items();
    r.block_errors = counter->item_errors();
    r.bit_errors = counter->errors();
    r.crc_failures = decoder->crc_failures();
    return r;
}

/// The core's own figure for the same work on one stream, device memory
/// throughout: per batch of max_blocks transport blocks, the generator with
/// the coded bits given, detect_device in max_batch pieces, decode_device and
/// the error count; the median ms per batch. CUDA only (else 0).
template <class Encoder, class Decoder>
double core_coded_chain_ms_with(const settings& s,
                                const core::transport_block_format& f,
                                const Encoder& encoder,
                                Decoder& decoder)
{
    if (s.backend == "cpu")
        return 0;
    const int unit = s.shape.nt * core::constellation(s.mod).bits_per_symbol();
    const size_t T = size_t(s.max_blocks), per_block = size_t(f.G / unit);
    const size_t problems = T * per_block, nr = size_t(s.shape.nr),
                 nt = size_t(s.shape.nt);
    core::channel_generator generator(s.shape, s.mod, 1, 1, core::backend::cuda);
    auto det = core::make_detector(
        s.detector.name, { s.shape, s.mod, s.detector.parameters }, core::backend::cuda);
    det->set_bad_problem_policy(core::bad_problem_policy::erase);
    std::vector<uint8_t> info(T * size_t(f.A)), coded(T * size_t(f.G));
    std::mt19937_64 rng(1);
    for (auto& b : info)
        b = uint8_t(rng() & 1);
    for (size_t t = 0; t < T; ++t)
        encoder.encode(info.data() + t * size_t(f.A), coded.data() + t * size_t(f.G));
    struct device_array {
        void* p;
        explicit device_array(size_t bytes) : p(core::allocate_device(bytes)) {}
        ~device_array() { core::free_device(p); }
    };
    device_array d_coded(coded.size()), d_info(info.size()), d_bits(coded.size()),
        H(problems * nr * nt * sizeof(core::cfloat)),
        y(problems * nr * sizeof(core::cfloat)), llr(coded.size() * sizeof(float)),
        decoded(info.size()), counts(2 * sizeof(uint64_t));
    core::copy_memory(
        d_coded.p, coded.data(), coded.size(), core::copy_direction::host_to_device);
    core::copy_memory(
        d_info.p, info.data(), info.size(), core::copy_direction::host_to_device);
    core::device_stream stream;
    const float n0 = core::noise_variance_from_snr_db(s.snr_db);
    return host_median_ms(9, [&](int i) {
        generator.generate_device(uint64_t(i) * problems,
                                  problems,
                                  n0,
                                  static_cast<uint8_t*>(d_bits.p),
                                  static_cast<core::cfloat*>(H.p),
                                  static_cast<core::cfloat*>(y.p),
                                  stream.get(),
                                  static_cast<const uint8_t*>(d_coded.p));
        for (size_t first = 0; first < problems; first += size_t(s.max_batch)) {
            core::detector_input in;
            in.H = static_cast<const core::cfloat*>(H.p) + first * nr * nt;
            in.y = static_cast<const core::cfloat*>(y.p) + first * nr;
            in.channels = std::min(problems - first, size_t(s.max_batch));
            in.n0 = n0;
            det->detect_device(
                in, static_cast<float*>(llr.p) + first * size_t(unit), stream.get());
        }
        decoder.decode_device(static_cast<const float*>(llr.p),
                              T,
                              static_cast<uint8_t*>(decoded.p),
                              stream.get());
        core::count_errors_device(static_cast<const uint8_t*>(decoded.p),
                                  static_cast<const uint8_t*>(d_info.p),
                                  T,
                                  size_t(f.A),
                                  static_cast<unsigned long long*>(counts.p),
                                  stream.get());
        decoder.device_results(stream.get()); // synchronises
        det->check_device_status(stream.get());
    });
}

double core_coded_chain_ms(const settings& s, const core::transport_block_format& f)
{
    if (s.backend == "cpu")
        return 0;
    if (s.code == "ldpc") {
        const core::nr_transport_block_format nr = nr_format(f);
        core::nr_transport_block_decoder decoder(nr, {}, core::backend::cuda);
        return core_coded_chain_ms_with(
            s, f, core::nr_transport_block_encoder(nr), decoder);
    }
    core::transport_block_decoder decoder(
        f, core::turbo_decoder_config{}, core::backend::cuda);
    return core_coded_chain_ms_with(s, f, core::transport_block_encoder(f), decoder);
}

int run_coded_chains(const settings& base,
                     const std::vector<core::detector_spec>& specs,
                     json_writer* json)
{
    int failures = 0;
    for (const auto& spec : specs) {
        settings s = base;
        s.detector = spec;
        const core::transport_block_format f = coded_format(s);
        const int unit = s.shape.nt * core::constellation(s.mod).bits_per_symbol();
        const uint64_t blocks =
            std::max<uint64_t>(1, s.problems * uint64_t(unit) / uint64_t(f.G));
        const coded_result r = run_coded_chain(s, f, blocks);
        const double core_ms = core_coded_chain_ms(s, f);
        const double info_mbps = double(r.blocks) * f.A / r.seconds / 1e6;
        const double steady_mbps = r.steady_blocks_per_s * f.A / 1e6;
        const double core_mbps =
            core_ms > 0 ? double(s.max_blocks) * f.A / (core_ms * 1e-3) / 1e6 : 0;
        const double problems_per_s = double(r.blocks) * (f.G / unit) / r.seconds;
        const double bler = r.blocks ? double(r.block_errors) / double(r.blocks) : 0;
        const bool all_out = r.blocks == blocks;
        failures += all_out ? 0 : 1;
        std::printf("%s %dx%d %s, %s coded chain (tb_source -> channel -> detector -> "
                    "tb_stream_decoder -> "
                    "counter, %s): A %d, G %d (rate %.3f), %.1f dB: %.1f Mbit/s of "
                    "information bits "
                    "in steady state (%.1f over the whole run with start-up: %.1f M "
                    "problems/s, %.3f s, "
                    "%llu of %llu blocks out, BLER %.3e, CRC failures %llu)",
                    s.detector.label().c_str(),
                    s.shape.nr,
                    s.shape.nt,
                    core::to_string(s.mod).c_str(),
                    s.code.c_str(),
                    s.backend == "cpu" ? "CPU" : "CUDA device buffers",
                    f.A,
                    f.G,
                    double(f.A + 24) / f.G,
                    s.snr_db,
                    steady_mbps,
                    info_mbps,
                    problems_per_s / 1e6,
                    r.seconds,
                    (unsigned long long)r.blocks,
                    (unsigned long long)blocks,
                    bler,
                    (unsigned long long)r.crc_failures);
        if (core_ms > 0)
            std::printf("; core on one stream, %d blocks per batch: %.1f Mbit/s (steady "
                        "state %.0f%% of it)",
                        s.max_blocks,
                        core_mbps,
                        100.0 * steady_mbps / core_mbps);
        std::printf("\n");
        if (json)
            json->begin_object()
                .value("detector", s.detector.label())
                .value("chain", "coded")
                .value("code", s.code)
                .value("backend", s.backend == "cpu" ? "cpu" : "cuda")
                .value("A", f.A)
                .value("G", f.G)
                .value("snr_db", s.snr_db)
                .value("flowgraph_seconds", r.seconds)
                .value("info_mbit_per_s", info_mbps)
                .value("steady_info_mbit_per_s", steady_mbps)
                .value("max_batch", s.max_batch)
                .value("mproblems_per_s", problems_per_s / 1e6)
                .value("blocks", (unsigned long long)r.blocks)
                .value("bler", bler)
                .value("crc_failures", (unsigned long long)r.crc_failures)
                .value("core_blocks_per_batch", s.max_blocks)
                .value("core_ms", core_ms)
                .value("core_info_mbit_per_s", core_mbps)
                .end_object();
    }
    return failures;
}

/// --chain ofdm: the settings from the command line, the runs, the JSON.
int run_ofdm(const command_line& cli,
             const settings& base,
             const std::vector<core::detector_spec>& specs)
{
    const ofdm_chain_settings o = checked_setup([&] {
        ofdm_chain_settings v;
        v.grid = cli.text("grid");
        v.nr = base.shape.nr;
        v.nt = base.shape.nt;
        v.mod = base.mod;
        v.slots = int(cli.integer("slots", 1, 1000));
        v.data_symbols = int(cli.integer("data-symbols", 1, 1000));
        v.pilot_positions =
            ::mimo_gpu::ofdm_grid::parse_pilot_positions(cli.text("pilots"));
        v.profile = cli.text("profile");
        v.doppler = cli.real("doppler");
        if (!(v.doppler >= 0))
            throw std::invalid_argument("--doppler must be >= 0 Hz");
        v.snr_db = cli.real("snr-ofdm");
        v.code_rate = base.code_rate;
        v.frames = uint64_t(cli.integer("frames", 1, 1LL << 32));
        v.distinct_frames = int(cli.integer("distinct-frames", 1, 1024));
        v.source_buffer = base.source_buffer;
        v.backend = base.backend;
        v.max_blocks = int(cli.integer("decoder-max-blocks", 0, 1 << 16));
        v.decoder_window = int(cli.integer("decoder-window", 8, 1 << 30));
        v.device_buffers = cli.text("device-buffers");
        if (v.device_buffers != "default" && v.device_buffers != "on" &&
            v.device_buffers != "off")
            throw std::invalid_argument("--device-buffers is default, on or off, got " +
                                        v.device_buffers);
        v.paced_frames = uint64_t(cli.integer("paced-frames", 0, 1LL << 32));
        v.pace = cli.real("pace");
        v.stage = cli.text("stage");
        v.time_interpolation = cli.text("time-interpolation");
        v.noise_per_antenna = cli.flag("noise-per-antenna").value_or(true);
        v.across_frames = cli.flag("across-frames").value_or(false);
        v.block_buffer_frames = int(cli.integer("block-buffer-frames", 0, 64));
        v.decoder_max_wait_ms = cli.real("decoder-max-wait-ms");
        if (v.stage != "rx" && v.stage != "detector" && v.stage != "decoder" &&
            v.stage != "tx" && v.stage != "tx-channel" && v.stage != "loopback")
            throw std::invalid_argument(
                "--stage is rx, detector, decoder, tx, tx-channel or loopback, got " +
                v.stage);
        if (!(v.pace > 0 && v.pace <= 100))
            throw std::invalid_argument("--pace must be in (0, 100]");
        grid_of(v); // a frame the settings cannot make: a usage error, here
        return v;
    });
    std::ofstream json_file;
    std::unique_ptr<json_writer> json;
    if (cli.is_set("json")) {
        json_file.open(cli.text("json"));
        if (!json_file)
            throw std::runtime_error("cannot write " + cli.text("json"));
        json = std::make_unique<json_writer>(json_file);
        json->begin_object()
            .value("program", "mimo_gpu_flowgraph_bench")
            .value("chain", "ofdm")
            .begin_array("runs");
    }
    const int failures = run_ofdm_chains(o, specs, json.get());
    if (json) {
        json->end_array().end_object();
        json_file << "\n";
    }
    return failures ? 1 : 0;
}

/// The options, checked; `specs` receives the --detectors list.
settings read_settings(const command_line& cli, std::vector<core::detector_spec>& specs)
{
    return checked_setup([&] {
        settings v;
        const std::string list =
            cli.is_set("detectors") ? cli.text("detectors") : cli.text("detector");
        specs = core::parse_detector_list(list);
        v.detector = specs.front();
        v.shape = { int(cli.integer("nr", 1, core::k_largest_shape)),
                    int(cli.integer("nt", 1, core::k_largest_shape)) };
        v.mod = core::modulation_from_string(cli.text("modulation"));
        for (const auto& spec : specs)
            core::find_detector_family(spec.name).checked(
                { v.shape, v.mod, spec.parameters });
        v.problems = uint64_t(cli.integer("problems", 1, 1LL << 40));
        v.distinct = size_t(cli.integer("distinct", 1, 1 << 24));
        v.max_batch = int(cli.integer("max-batch", 1, 1 << 24));
        v.source_buffer = long(cli.integer("source-buffer", 0, 1 << 24));
        v.backend = cli.text("backend");
        v.chain = cli.text("chain");
        if (v.chain != "host" && v.chain != "device" && v.chain != "coded" &&
            v.chain != "ofdm")
            throw std::invalid_argument("--chain is host, device, coded or ofdm, got " +
                                        v.chain);
        v.tb_size = int(cli.integer("tb-size", 40, 1 << 20));
        v.code_rate = cli.real("code-rate");
        if (!(v.code_rate > 0.05 && v.code_rate <= 0.95))
            throw std::invalid_argument("--code-rate must be in (0.05, 0.95]");
        v.snr_db = cli.real("snr");
        v.max_blocks = int(cli.integer("max-blocks", 1, 1 << 16));
        v.code = cli.text("code");
        if (v.code != "turbo" && v.code != "ldpc")
            throw std::invalid_argument("--code is turbo or ldpc, got " + v.code);
        v.bad_every = uint64_t(cli.integer("bad-every", 0, 1LL << 40));
        return v;
    });
}

/// --json's writer (null without the option), its top-level fields written.
std::unique_ptr<json_writer>
open_json(const command_line& cli, const settings& base, std::ofstream& file)
{
    if (!cli.is_set("json"))
        return nullptr;
    file.open(cli.text("json"));
    if (!file)
        throw std::runtime_error("cannot write " + cli.text("json"));
    auto json = std::make_unique<json_writer>(file);
    json->begin_object()
        .value("program", "mimo_gpu_flowgraph_bench")
        .value("shape",
               std::to_string(base.shape.nr) + "x" + std::to_string(base.shape.nt))
        .value("modulation", core::to_string(base.mod))
        .value("problems", (unsigned long long)base.problems)
        .value("max_batch", base.max_batch)
        .value("source_buffer", (long long)base.source_buffer)
        .begin_array("runs");
    return json;
}

/// The host-buffer chain of each detector beside GNU Radio's ceiling and the
/// core's own figure; the number of chains that lost problems.
int run_host_chains(const settings& base,
                    const std::vector<core::detector_spec>& specs,
                    const input_sets& in,
                    json_writer* json)
{
    int failures = 0;
    flowgraph_result ceiling;
    for (size_t k = 0; k < specs.size(); ++k) {
        settings s = base;
        s.detector = specs[k];
        const flowgraph_result fr = run_flowgraph(s, in);
        if (k == 0)
            ceiling = run_ceiling(s, in, fr); // the streams alone, with the same buffers
        if (fr.items_out != s.problems) {
            std::printf("%s: %llu of %llu problems came out\n",
                        s.detector.label().c_str(),
                        (unsigned long long)fr.items_out,
                        (unsigned long long)s.problems);
            ++failures;
        }
        // The core's own figure: detect() on batches of max_batch from the same
        // (pageable) host memory.
        auto det = core::make_detector(s.detector.name,
                                       { s.shape, s.mod, s.detector.parameters },
                                       core::backend_from_string(s.backend));
        const size_t batch = std::min<size_t>(s.distinct, size_t(s.max_batch));
        std::vector<float> llr(batch * size_t(det->llrs_per_problem()));
        const double core_ms = host_median_ms(15, [&](int) {
            det->detect(in.H[0].data(), in.y[0].data(), batch, 0.05f, llr.data());
        });
        const double flow_mps = s.problems / fr.seconds / 1e6,
                     ceiling_mps = s.problems / ceiling.seconds / 1e6,
                     core_mps = batch / (core_ms * 1e-3) / 1e6;
        const double bits = double(s.problems) * det->llrs_per_problem();
        std::printf(
            "%s %dx%d %s, backend %s: flowgraph %.2f M problems/s (%.1f Mbit/s, %.3f s, "
            "%llu of %llu problems out, latency %.2f ms); GNU Radio ceiling for the same "
            "streams %.2f M problems/s (%.0f%% of it; head buffers %ld / %ld items); "
            "core "
            "detect() of %zu problems from pageable memory %.2f M problems/s\n",
            s.detector.label().c_str(),
            s.shape.nr,
            s.shape.nt,
            core::to_string(s.mod).c_str(),
            fr.active.c_str(),
            flow_mps,
            bits / fr.seconds / 1e6,
            fr.seconds,
            (unsigned long long)fr.items_out,
            (unsigned long long)s.problems,
            fr.latency_ms,
            ceiling_mps,
            100.0 * flow_mps / ceiling_mps,
            fr.head_buffer_H,
            fr.head_buffer_y,
            batch,
            core_mps);
        if (json)
            json->begin_object()
                .value("detector", s.detector.label())
                .value("backend", fr.active)
                .value("flowgraph_seconds", fr.seconds)
                .value("flowgraph_mproblems_per_s", flow_mps)
                .value("flowgraph_mbit_per_s", bits / fr.seconds / 1e6)
                .value("latency_ms", fr.latency_ms)
                .value("ceiling_mproblems_per_s", ceiling_mps)
                .value("ceiling_latency_ms", ceiling.latency_ms)
                .value("fraction_of_ceiling", flow_mps / ceiling_mps)
                .value("head_buffer_H_items", (long long)fr.head_buffer_H)
                .value("head_buffer_y_items", (long long)fr.head_buffer_y)
                .value("core_batch", (unsigned long long)batch)
                .value("core_ms", core_ms)
                .value("core_mproblems_per_s", core_mps)
                .end_object();
    }
    return failures;
}

int run(const command_line& cli)
{
    gr::logging::singleton().set_default_level(gr::log_level::warn);
    std::vector<core::detector_spec> specs;
    const settings base = read_settings(cli, specs);
    if (base.chain == "ofdm")
        return run_ofdm(cli, base, specs);
    input_sets in(base.shape, base.mod, base.distinct, 1, 1);
    const size_t injected = inject_bad_problems(in, base.shape, base.bad_every);
    if (base.bad_every) {
        std::printf(
            "soak: %s %dx%d %s, %zu of %zu distinct problems bad, %llu problems\n",
            base.detector.label().c_str(),
            base.shape.nr,
            base.shape.nt,
            core::to_string(base.mod).c_str(),
            injected,
            base.distinct,
            (unsigned long long)base.problems);
        return report_soak(base, run_flowgraph(base, in));
    }
    std::ofstream json_file;
    const std::unique_ptr<json_writer> json = open_json(cli, base, json_file);
    const int failures =
        base.chain == "device"  ? run_device_chains(base, specs, json.get())
        : base.chain == "coded" ? run_coded_chains(base, specs, json.get())
                                : run_host_chains(base, specs, in, json.get());
    if (json) {
        json->end_array().end_object();
        json_file << "\n";
    }
    return failures ? 1 : 0;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli("mimo_gpu_flowgraph_bench",
                     "A detector's throughput through a GNU Radio flowgraph: vector "
                     "sources of pre-drawn (H, y)\n"
                     "-> head -> mimo_detector -> null sink, beside the core's detect() "
                     "on the same batch size.");
    cli.add_option("detector",
                   "SPEC",
                   "a registered detector, e.g. nway:1, mtt, ot:llr_clip=4",
                   "nway:1");
    cli.add_option("detectors",
                   "LIST",
                   "several detectors, comma-separated (instead of --detector)",
                   "");
    cli.add_option("json", "FILE", "write the results as JSON", "");
    cli.add_option(
        "chain",
        "KIND",
        "host: pre-drawn (H, y) from vector sources; device: the GPU channel "
        "source -> detector -> error counter on device buffers (CUDA); coded: "
        "transport blocks -> channel -> detector -> decoder -> block error counter",
        "host");
    cli.add_option(
        "tb-size", "A", "--chain coded: information bits per transport block", "6120");
    cli.add_option(
        "grid",
        "NAME",
        "--chain ofdm: resource grid preset (lte1.4 .. lte20, nr20, nr40, nr100)",
        "nr100");
    cli.add_option("slots", "N", "--chain ofdm: slots per frame", "2");
    cli.add_option("data-symbols", "D", "--chain ofdm: data symbols per slot", "13");
    cli.add_option("pilots",
                   "LIST",
                   "--chain ofdm: positions of each slot's pilot symbols, e.g. 0 or 3,10",
                   "0");
    cli.add_flag("across-frames",
                 "--chain ofdm: ofdm_rx estimates across frames (needs "
                 "--time-interpolation lmmse)");
    cli.add_flag("noise-per-antenna",
                 "--chain ofdm: ofdm_rx measures each antenna's noise and whitens where "
                 "they differ (default; --no-noise-per-antenna: one N0 for all)",
                 true);
    cli.add_option(
        "profile", "NAME", "--chain ofdm: delay profile (flat, epa, eva, etu)", "epa");
    cli.add_option("doppler",
                   "HZ",
                   "--chain ofdm, stages tx-channel and loopback: the channel model's "
                   "maximum Doppler (0: block fading)",
                   "0");
    cli.add_option("snr-ofdm", "DB", "--chain ofdm: SNR of the recorded frames", "30");
    cli.add_option("frames", "N", "--chain ofdm: frames through the flowgraph", "2000");
    cli.add_option("distinct-frames",
                   "N",
                   "--chain ofdm: frames drawn and repeated by the sources",
                   "8");
    cli.add_option("device-buffers",
                   "MODE",
                   "--chain ofdm: the detector's and decoder's device_buffers: default "
                   "(the blocks'), on or off",
                   "default");
    cli.add_option("paced-frames",
                   "N",
                   "--chain ofdm: frames of the latency run at the sample rate (0: none)",
                   "0");
    cli.add_option(
        "pace", "X", "--chain ofdm: the paced source's rate over the sample rate", "1");
    cli.add_option("decoder-max-wait-ms",
                   "MS",
                   "--chain ofdm: tb_stream_decoder's max_wait_ms (-1: its default)",
                   "-1");
    cli.add_option("block-buffer-frames",
                   "N",
                   "--chain ofdm: frames the buffers between the receiver's blocks hold "
                   "at least (0: GNU Radio's)",
                   "0");
    cli.add_option("stage",
                   "NAME",
                   "--chain ofdm: where the chain ends: rx (ofdm_rx -> null sinks), "
                   "detector, decoder; or "
                   "the transmit side alone: tx (tb_source -> ofdm_tx), tx-channel (-> "
                   "ofdm_channel_model); or loopback (the transmit side into the "
                   "receiver, every block on --backend)",
                   "decoder");
    cli.add_option("time-interpolation",
                   "NAME",
                   "--chain ofdm: ofdm_rx's time interpolation: hold, linear or lmmse "
                   "(the block checks it)",
                   "hold");
    cli.add_option("code-rate", "R", "--chain coded: code rate (G from it)", "0.5");
    cli.add_option(
        "code",
        "NAME",
        "--chain coded: turbo (LTE 36.212) or ldpc (NR 38.212, offset min-sum, "
        "10 iterations)",
        "turbo");
    cli.add_option("snr", "DB", "--chain coded: Es/N0 per receive antenna", "14");
    cli.add_option(
        "max-blocks", "N", "--chain coded: transport blocks per decoder call", "128");
    cli.add_option("decoder-max-blocks",
                   "N",
                   "--chain ofdm: tb_stream_decoder's max_blocks (0: its default)",
                   "0");
    cli.add_option("decoder-window",
                   "W",
                   "--chain ofdm: tb_stream_decoder's turbo window (trellis stages)",
                   "64");
    cli.add_option("nr", "NR", "receive antennas", "4");
    cli.add_option("nt", "NT", "streams", "4");
    cli.add_option(
        "modulation", "NAME", "qpsk, 16qam, 64qam, 256qam or 1024qam", "16qam");
    cli.add_option("problems", "N", "problems through the flowgraph", "4000000");
    cli.add_option("distinct", "N", "distinct problems the sources repeat", "16800");
    cli.add_option("max-batch", "B", "the detector block's max_batch", "8400");
    cli.add_option("source-buffer",
                   "ITEMS",
                   "min output buffer of the sources and heads (0: default)",
                   "0");
    cli.add_option("backend", "NAME", "auto, cpu or cuda", "auto");
    cli.add_option(
        "bad-every",
        "K",
        "soak: every K-th distinct problem is bad; check items, erasures and memory",
        "0");
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
