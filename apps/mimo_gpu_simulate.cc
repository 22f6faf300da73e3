// mimo_gpu_simulate: the main job. For each SNR point it builds and runs a GNU Radio
// flowgraph (random bits -> mimo_channel -> qr_decomposition -> nway_detector ->
// ber_counter, one chain per N, plus ml_detector -> ber_counter), shows progress,
// then prints a BER and throughput table and writes JSON for mimo_gpu_plot.py.
#include "command_line.h"
#include "json_writer.h"

#include <gnuradio/analog/random_uniform_source.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/stream_to_vector.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/mimo_channel.h>
#include <gnuradio/mimo_gpu/ml_detector.h>
#include <gnuradio/mimo_gpu/nway_detector.h>
#include <gnuradio/mimo_gpu/qr_decomposition.h>
#include <gnuradio/top_block.h>

#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/ml_detector.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

using namespace mimo_gpu_apps;
namespace core = ::mimo_gpu;

namespace {

/// Everything the options decide, checked.
struct simulation_config {
    int nr = 4, nt = 4;
    std::string modulation;
    int bits_per_symbol = 0;
    std::vector<int> passes; ///< one N-way chain per entry
    bool ml = false;
    std::vector<double> snr_db;
    uint64_t problems = 0; ///< per SNR point
    std::string backend;
    int seed = 0;
    double llr_clip = 0;
    int max_batch = 0;
    std::string json_path;

    int bits_per_problem() const { return nt * bits_per_symbol; }

    static simulation_config from(const command_line& cli)
    {
        return checked_setup([&] {
            simulation_config c;
            c.nr = int(cli.integer("nr", 1, core::k_max_antennas));
            c.nt = int(cli.integer("nt", 1, core::k_max_antennas));
            core::mimo_shape{ c.nr, c.nt }.validate();
            const core::constellation constel(core::modulation_from_string(cli.text("modulation")));
            c.modulation = core::to_string(constel.kind());
            c.bits_per_symbol = constel.bits_per_symbol();
            if (cli.is_set("passes"))
                c.passes = cli.integer_list("passes", 1, c.nt);
            else
                for (int n = 1; n <= c.nt; ++n)
                    c.passes.push_back(n);
            const double candidates = std::pow(double(constel.order()), c.nt);
            c.ml = cli.flag("ml").value_or(candidates <= 65536.0);
            if (c.ml && candidates > double(core::k_ml_max_candidates))
                throw usage_error("--ml: M^nt = " + std::to_string((long long)candidates) +
                                  " candidates is more than the ML detector accepts (2^24)");
            c.snr_db = cli.real_range("snr");
            c.problems = uint64_t(cli.integer("problems", 1, 1LL << 40));
            c.backend = core::to_string(core::backend_from_string(cli.text("backend")));
            c.seed = int(cli.integer("seed", 0, 0x7fffffff));
            c.llr_clip = cli.real("llr-clip");
            if (c.llr_clip < 0)
                throw usage_error("--llr-clip must be >= 0");
            c.max_batch = int(cli.integer("max-batch", 1, 1 << 24));
            if (cli.is_set("json"))
                c.json_path = cli.text("json");
            return c;
        });
    }
};

/// One detector under test: an N-way chain (passes = N) or ML (passes = 0).
struct detector_spec {
    int passes;
    std::string name() const { return passes ? "N=" + std::to_string(passes) : "ML"; }
};

struct detector_result {
    detector_spec spec;
    uint64_t bits = 0, errors = 0;
    double ber() const { return bits ? double(errors) / double(bits) : 0.0; }
};

struct point_result {
    double snr_db = 0, noise_var = 0, seconds = 0;
    std::vector<detector_result> detectors;
    double detected_mbps() const
    {
        double bits = 0;
        for (const auto& d : detectors)
            bits += double(d.bits);
        return seconds > 0 ? bits / seconds / 1e6 : 0.0;
    }
};

/// The flowgraph of one SNR point. The transmitted bits fan out to every ber_counter.
class ber_flowgraph
{
public:
    ber_flowgraph(const simulation_config& c, const std::vector<detector_spec>& detectors, double snr_db)
        : m_top(gr::make_top_block("mimo_gpu_simulate")), m_detectors(detectors)
    {
        const int bits = c.bits_per_problem();
        const double n0 = core::noise_variance_from_snr_db(snr_db);
        auto source = gr::analog::random_uniform_source_b::make(0, 2, c.seed);
        auto head = gr::blocks::head::make(sizeof(char), c.problems * uint64_t(bits));
        auto to_vector = gr::blocks::stream_to_vector::make(sizeof(char), bits);
        auto channel = gr::mimo_gpu::mimo_channel::make(c.nr, c.nt, c.modulation, snr_db, uint64_t(c.seed) + 1);
        m_top->connect(source, 0, head, 0);
        m_top->connect(head, 0, to_vector, 0);
        m_top->connect(to_vector, 0, channel, 0);

        for (const auto& spec : detectors) {
            auto counter = gr::mimo_gpu::ber_counter::make(bits);
            m_top->connect(to_vector, 0, counter, 0);
            if (spec.passes > 0) {
                auto qr = gr::mimo_gpu::qr_decomposition::make(c.nr, c.nt, spec.passes, c.backend, c.max_batch);
                auto det = gr::mimo_gpu::nway_detector::make(
                    c.nr, c.nt, c.modulation, spec.passes, n0, c.llr_clip, c.backend, c.max_batch);
                m_top->connect(channel, 0, qr, 0);
                m_top->connect(channel, 1, qr, 1);
                m_top->connect(qr, 0, det, 0);
                m_top->connect(det, 0, counter, 1);
                m_backend = det->active_backend();
            } else {
                auto det = gr::mimo_gpu::ml_detector::make(c.nr, c.nt, c.modulation, n0, c.backend, c.max_batch);
                m_top->connect(channel, 0, det, 0);
                m_top->connect(channel, 1, det, 1);
                m_top->connect(det, 0, counter, 1);
                m_backend = det->active_backend();
            }
            m_counters.push_back(counter);
        }
    }

    const std::string& active_backend() const { return m_backend; }

    /// Runs the flowgraph to its end, calling progress(results so far) about every `period`.
    point_result run(double snr_db, std::chrono::milliseconds period,
                     const std::function<void(const point_result&)>& progress)
    {
        const auto start = std::chrono::steady_clock::now();
        m_top->start();
        auto finished = std::async(std::launch::async, [this] { m_top->wait(); });
        point_result r;
        r.snr_db = snr_db;
        r.noise_var = core::noise_variance_from_snr_db(snr_db);
        while (finished.wait_for(period) != std::future_status::ready) {
            collect(r, start);
            progress(r);
        }
        finished.get();
        collect(r, start);
        return r;
    }

private:
    void collect(point_result& r, std::chrono::steady_clock::time_point start) const
    {
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        r.detectors.clear();
        for (size_t i = 0; i < m_counters.size(); ++i)
            r.detectors.push_back({ m_detectors[i], m_counters[i]->bits(), m_counters[i]->errors() });
    }

    gr::top_block_sptr m_top;
    std::vector<detector_spec> m_detectors;
    std::vector<gr::mimo_gpu::ber_counter::sptr> m_counters;
    std::string m_backend;
};

/// The per-SNR progress line on stderr: rewritten in place on a terminal,
/// printed once per point otherwise (logs of CI runs stay short).
class progress_line
{
public:
    explicit progress_line(uint64_t bits_per_detector)
        : m_total(bits_per_detector), m_tty(isatty(fileno(stderr)))
    {
    }
    void update(const point_result& r) const
    {
        if (m_tty)
            std::fprintf(stderr, "\r%s\033[K", text(r).c_str());
    }
    void finish(const point_result& r) const
    {
        std::fprintf(stderr, m_tty ? "\r%s\033[K\n" : "%s\n", text(r).c_str());
    }

private:
    std::string text(const point_result& r) const
    {
        uint64_t done = m_total;
        for (const auto& d : r.detectors)
            done = std::min(done, d.bits);
        char buf[128];
        std::snprintf(buf, sizeof buf, "SNR %6.2f dB: %5.1f%% %7.1f s |", r.snr_db,
                      m_total ? 100.0 * double(done) / double(m_total) : 100.0, r.seconds);
        std::string line = buf;
        for (const auto& d : r.detectors) {
            std::snprintf(buf, sizeof buf, " %s %.3e", d.spec.name().c_str(), d.ber());
            line += buf;
        }
        return line;
    }
    uint64_t m_total;
    bool m_tty;
};

void print_table(const simulation_config& c, const std::vector<point_result>& points)
{
    std::printf("\nBER, %d x %d %s, %llu problems (%llu bits per detector) per SNR point\n", c.nr, c.nt,
                c.modulation.c_str(), (unsigned long long)c.problems,
                (unsigned long long)(c.problems * uint64_t(c.bits_per_problem())));
    std::printf("%9s", "SNR [dB]");
    for (const auto& d : points.front().detectors)
        std::printf(" %11s", d.spec.name().c_str());
    std::printf(" %9s %12s\n", "wall [s]", "Mbit/s");
    for (const auto& p : points) {
        std::printf("%9.2f", p.snr_db);
        for (const auto& d : p.detectors)
            std::printf(" %11.4e", d.ber());
        std::printf(" %9.3f %12.3f\n", p.seconds, p.detected_mbps());
    }
    std::printf("Mbit/s: bits detected by all %zu detectors of the flowgraph over its wall time\n"
                "(end to end: bit source and channel simulation included).\n",
                points.front().detectors.size());
}

void write_json(const simulation_config& c, const std::string& active_backend,
                const std::vector<point_result>& points, double total_seconds)
{
    std::ofstream out(c.json_path);
    if (!out)
        throw std::runtime_error("cannot write the JSON file '" + c.json_path + "'");
    json_writer j(out);
    j.begin_object();
    j.value("program", "mimo_gpu_simulate");
    j.begin_object("config");
    j.value("nr", c.nr).value("nt", c.nt).value("modulation", c.modulation);
    j.value("bits_per_symbol", c.bits_per_symbol).values("passes", c.passes).value("ml", c.ml);
    j.values("snr_db", c.snr_db).value("snr_definition", "Es/N0 per receive antenna, N0 = 10^(-snr/10)");
    j.value("problems_per_point", (unsigned long long)c.problems).value("seed", c.seed);
    j.value("llr_clip", c.llr_clip).value("max_batch", c.max_batch);
    j.end_object();
    j.begin_object("backend");
    j.value("requested", c.backend).value("active", active_backend);
    j.value("cuda_available", core::cuda_available());
    j.value("cuda_unavailable_reason", core::cuda_unavailable_reason());
    j.end_object();
    j.begin_array("points");
    for (const auto& p : points) {
        j.begin_object();
        j.value("snr_db", p.snr_db).value("noise_var", p.noise_var).value("seconds", p.seconds);
        j.value("detected_mbps", p.detected_mbps());
        j.begin_array("detectors");
        for (const auto& d : p.detectors) {
            j.begin_object();
            j.value("name", d.spec.name()).value("passes", d.spec.passes);
            j.value("bits", (unsigned long long)d.bits).value("errors", (unsigned long long)d.errors);
            j.value("ber", d.ber());
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    j.value("total_seconds", total_seconds);
    j.end_object();
    if (!out)
        throw std::runtime_error("error writing the JSON file '" + c.json_path + "'");
}

int run(const command_line& cli)
{
    const simulation_config c = simulation_config::from(cli);
    // The blocks log their configuration at info level once per flowgraph, i.e.
    // once per SNR point: keep that for --verbose.
    if (!cli.flag("verbose").value_or(false))
        gr::logging::singleton().set_default_level(gr::log_level::warn);
    std::vector<detector_spec> detectors;
    for (int n : c.passes)
        detectors.push_back({ n });
    if (c.ml)
        detectors.push_back({ 0 });

    std::fprintf(stderr, "mimo_gpu_simulate: %d x %d %s, detectors", c.nr, c.nt, c.modulation.c_str());
    for (const auto& d : detectors)
        std::fprintf(stderr, " %s", d.name().c_str());
    std::fprintf(stderr, ", %zu SNR points x %llu problems, backend %s\n", c.snr_db.size(),
                 (unsigned long long)c.problems, c.backend.c_str());

    const progress_line progress(c.problems * uint64_t(c.bits_per_problem()));
    std::vector<point_result> points;
    std::string active_backend;
    const auto start = std::chrono::steady_clock::now();
    for (double snr : c.snr_db) {
        ber_flowgraph fg = checked_setup([&] { return ber_flowgraph(c, detectors, snr); });
        active_backend = fg.active_backend();
        points.push_back(fg.run(snr, std::chrono::milliseconds(250),
                                [&](const point_result& r) { progress.update(r); }));
        progress.finish(points.back());
        for (const auto& d : points.back().detectors)
            if (d.bits != c.problems * uint64_t(c.bits_per_problem()))
                throw std::runtime_error("detector " + d.spec.name() + " counted " + std::to_string(d.bits) +
                                         " bits instead of " +
                                         std::to_string(c.problems * uint64_t(c.bits_per_problem())) +
                                         " (a block stopped early; see the messages above)");
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    print_table(c, points);
    std::printf("backend: %s (requested %s)%s%s; total %.2f s\n", active_backend.c_str(), c.backend.c_str(),
                core::cuda_available() ? "" : "; CUDA unavailable: ",
                core::cuda_available() ? "" : core::cuda_unavailable_reason().c_str(), total);
    if (!c.json_path.empty()) {
        write_json(c, active_backend, points, total);
        std::printf("wrote %s (plot it with mimo_gpu_plot.py %s)\n", c.json_path.c_str(), c.json_path.c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_simulate",
        "Bit error rate of the N-way MIMO detector (N = 1..nt search passes) and of\n"
        "exhaustive ML over a range of SNRs, each point a GNU Radio flowgraph:\n"
        "  random bits -> head -> stream_to_vector(nt*Q) -> mimo_channel\n"
        "    -> qr_decomposition(N) -> nway_detector(N) -> ber_counter   (one chain per N)\n"
        "    -> ml_detector -> ber_counter                                (with --ml)\n"
        "The detectors run on the GPU when one is usable (--backend auto), else on the CPU.",
        "SNR is Es/N0 per receive antenna (unit-energy symbols, i.i.d. CN(0,1) channel\n"
        "taps), N0 = 10^(-SNR/10). Every SNR point reuses the same seed: the same bits,\n"
        "channels and noise shape, only the noise power changes.\n"
        "Progress goes to stderr, the table to stdout. Exit code 2: bad option; 1: run-time error.\n"
        "Example:\n"
        "  mimo_gpu_simulate --nr 4 --nt 4 --modulation 16qam --snr 0:24:2 --json ber.json\n"
        "  mimo_gpu_plot.py ber.json -o ber.png\n");
    cli.add_option("nr", "NR", "receive antennas", "4");
    cli.add_option("nt", "NT", "transmitted streams (NT <= NR)", "4");
    cli.add_option("modulation", "NAME", "qpsk, 16qam, 64qam, 256qam or 1024qam", "16qam");
    cli.add_option("passes", "LIST", "N-way pass counts to compare, e.g. 1,2,4 (default 1..NT)");
    cli.add_flag("ml", "also run exhaustive ML (default: on when M^NT <= 65536)", true);
    cli.add_option("snr", "A:B:STEP", "SNR points in dB, STOP included, or one value", "0:24:3");
    cli.add_option("problems", "COUNT", "problems (resource elements) per SNR point", "10000");
    cli.add_option("backend", "NAME", "auto, cpu or cuda (auto honours MIMO_GPU_BACKEND)", "auto");
    cli.add_option("seed", "S", "seed of the bits and of the channel", "1");
    cli.add_option("llr-clip", "C", "clip N-way LLRs to [-C, C]; 0 disables clipping", "0");
    cli.add_option("max-batch", "B", "most problems a block hands to the core per call", "8400");
    cli.add_option("json", "FILE", "write the configuration and results as JSON");
    cli.add_flag("verbose", "show the blocks' information messages (one set per SNR point)");
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
