// mimo_gpu_flowgraph_bench: a detector's throughput through a GNU Radio
// flowgraph, as users run it: vector sources of pre-drawn (H, y), repeated ->
// head -> mimo_detector -> null sink, beside the core's own end-to-end figure
// (the same detector's detect() on the same batch size, host memory to host
// memory). Any registered detector family by name.
#include "bench_util.h"
#include "command_line.h"

#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/detector_registry.h>

#include <chrono>
#include <cstdio>

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
};

/// Seconds for `s.problems` problems through sources -> head -> detector -> null sink.
double run_flowgraph(const settings& s, const input_sets& in, std::string& active)
{
    auto tb = gr::make_top_block("mimo_gpu_flowgraph_bench");
    const std::vector<gr_complex> H(in.H[0].begin(), in.H[0].end()),
        y(in.y[0].begin(), in.y[0].end());
    auto H_source = gr::blocks::vector_source_c::make(H, true, s.shape.nr * s.shape.nt);
    auto y_source = gr::blocks::vector_source_c::make(y, true, s.shape.nr);
    auto H_head =
        gr::blocks::head::make(sizeof(gr_complex) * s.shape.nr * s.shape.nt, s.problems);
    auto y_head = gr::blocks::head::make(sizeof(gr_complex) * s.shape.nr, s.problems);
    auto det = gr::mimo_gpu::mimo_detector::make(
        s.detector.name,
        s.shape.nr,
        s.shape.nt,
        core::to_string(s.mod),
        core::format_parameter_list(s.detector.parameters),
        0.05,
        1,
        s.backend,
        s.max_batch);
    auto sink =
        gr::blocks::null_sink::make(det->output_signature()->sizeof_stream_item(0));
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
    active = det->active_backend();
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
}

int run(const command_line& cli)
{
    gr::logging::singleton().set_default_level(gr::log_level::warn);
    const settings s = checked_setup([&] {
        settings v;
        v.detector = core::parse_detector_spec(cli.text("detector"));
        v.shape = { int(cli.integer("nr", 1, core::k_largest_shape)),
                    int(cli.integer("nt", 1, core::k_largest_shape)) };
        v.mod = core::modulation_from_string(cli.text("modulation"));
        core::find_detector_family(v.detector.name)
            .checked({ v.shape, v.mod, v.detector.parameters });
        v.problems = uint64_t(cli.integer("problems", 1, 1LL << 40));
        v.distinct = size_t(cli.integer("distinct", 1, 1 << 24));
        v.max_batch = int(cli.integer("max-batch", 1, 1 << 24));
        v.source_buffer = long(cli.integer("source-buffer", 0, 1 << 24));
        v.backend = cli.text("backend");
        return v;
    });
    const input_sets in(s.shape, s.mod, s.distinct, 1, 1);
    std::string active;
    const double seconds = run_flowgraph(s, in, active);

    // The core's own figure: detect() on batches of max_batch from the same (pageable)
    // host memory.
    auto det = core::make_detector(s.detector.name,
                                   { s.shape, s.mod, s.detector.parameters },
                                   core::backend_from_string(s.backend));
    const size_t batch = std::min<size_t>(s.distinct, size_t(s.max_batch));
    std::vector<float> llr(batch * size_t(det->llrs_per_problem()));
    const double core_ms = host_median_ms(15, [&](int) {
        det->detect(in.H[0].data(), in.y[0].data(), batch, 0.05f, llr.data());
    });
    const double bits = double(s.problems) * det->llrs_per_problem();
    std::printf("%s %dx%d %s, backend %s: flowgraph %llu problems in %.3f s: %.2f M "
                "problems/s, %.1f Mbit/s "
                "(source buffers %s); core detect() of %zu problems from pageable "
                "memory: %.3f ms, %.2f M "
                "problems/s, %.1f Mbit/s\n",
                s.detector.label().c_str(),
                s.shape.nr,
                s.shape.nt,
                core::to_string(s.mod).c_str(),
                active.c_str(),
                (unsigned long long)s.problems,
                seconds,
                s.problems / seconds / 1e6,
                bits / seconds / 1e6,
                s.source_buffer ? (std::to_string(s.source_buffer) + " items").c_str()
                                : "default",
                batch,
                core_ms,
                batch / (core_ms * 1e-3) / 1e6,
                mbps(batch * size_t(det->llrs_per_problem()), core_ms));
    return 0;
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
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
