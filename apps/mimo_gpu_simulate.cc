// mimo_gpu_simulate: the main job. For each SNR point it builds and runs a GNU Radio
// flowgraph (random bits -> mimo_channel -> mimo_detector -> ber_counter, one
// detector per --detectors entry, any registered family), shows progress, then
// prints a BER and throughput table and writes JSON for mimo_gpu_plot.py.
// With --coded the bits are LTE transport blocks: tb_encoder before the channel,
// and per detector the LLRs go as PDUs to tb_decoder and a block error counter,
// giving the coded BER and the block error rate as well. With --coded --idd N
// each detector receives in an idd_receiver of up to N detector-decoder passes.
// With --symbols-per-channel S, S consecutive problems share one channel matrix
// (block fading over the S OFDM symbols of a frame): the channel block draws one H
// per S problems and the detectors take it once (channel reuse, massive MIMO).
#include "command_line.h"
#include "json_writer.h"
#include "pdu_stream_source.h"
#include "transport_block_error_counter.h"

#include <gnuradio/analog/random_uniform_source.h>
#include <gnuradio/blocks/deinterleave.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/interleave.h>
#include <gnuradio/blocks/stream_to_tagged_stream.h>
#include <gnuradio/blocks/stream_to_vector.h>
#include <gnuradio/blocks/vector_to_stream.h>
#include <gnuradio/logger.h>
#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/idd_receiver.h>
#include <gnuradio/mimo_gpu/mimo_channel.h>
#include <gnuradio/mimo_gpu/mimo_channel_source.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/nr_tb_decoder.h>
#include <gnuradio/mimo_gpu/nr_tb_encoder.h>
#include <gnuradio/mimo_gpu/tb_decoder.h>
#include <gnuradio/mimo_gpu/tb_encoder.h>
#include <gnuradio/pdu/tagged_stream_to_pdu.h>
#include <gnuradio/top_block.h>

#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

using namespace mimo_gpu_apps;
namespace core = ::mimo_gpu;

namespace {

/// LTE maps a transport block onto at most 4 layers (TS 36.212 5.1.4.1.2).
constexpr int k_max_layers_per_block = 4;

/// The coded link (--coded): transport blocks of A bits, each coded onto G bits
/// (CRC24A, segmentation, turbo code, rate matching). With nt <= 4 a transport
/// block goes over all nt streams (NL = nt layers) and fills whole MIMO vectors.
/// With nt > 4 (multi-user, massive MIMO) every stream carries its own transport
/// blocks (NL = 1): nt consecutive blocks are sent side by side, block k on
/// stream k mod nt, Q bits per vector each.
struct coded_config {
    int A = 0;                  ///< transport block bits (--tb-size)
    int G = 0;                  ///< coded bits per transport block, a multiple of NL*Q
    int NL = 1;                 ///< layers per transport block: nt, or 1 per stream
    bool per_stream = false;    ///< nt > 4: each stream carries its own blocks
    double requested_rate = 0;  ///< --code-rate
    std::string code = "turbo"; ///< --code: turbo (LTE) or ldpc (NR)
    int code_blocks = 1;        ///< C per transport block
    std::string block_sizes;    ///< "K = ..." of the code blocks, for the report
    std::string
        algorithm; ///< turbo: max-log-map, log-map; ldpc: a min-sum or sum-product
    int iterations = 0;
    double extrinsic_scale = 0.75; ///< max-log-MAP only
    int window = 64;               ///< trellis stages per parallel window
    int max_blocks = 64;           ///< transport blocks per decoder call
    /// --idd: each detector in an iterative receiver of up to this many
    /// detector-decoder passes (idd_receiver); 0: one pass, tb_decoder.
    int idd = 0;
    uint64_t blocks = 0; ///< transport blocks per SNR point
    uint64_t requested_blocks =
        0; ///< --blocks (blocks: rounded up to whole groups and channels)
    double rate() const { return double(A) / double(G); }
};

/// G for A bits at code rate R: round((A + 24) / R), rounded up to a whole
/// number of MIMO vectors of `unit` = nt*Q bits (one transport block never
/// shares a vector with the next).
int coded_bits_for(int A, double rate, int unit)
{
    const double raw = std::round(double(A + 24) / rate);
    const double vectors = std::max(1.0, std::ceil(raw / double(unit)));
    if (vectors * unit > double(1 << 30))
        throw usage_error(
            "--tb-size / --code-rate: more than 2^30 coded bits per transport block");
    return int(vectors) * unit;
}

/// "mmse, mmse_cg": the registered families that take the shape and modulation.
std::string families_taking(int nr, int nt, core::modulation mod)
{
    std::string list;
    for (const auto& f : core::detector_families())
        if (f.takes({ nr, nt }, mod))
            list += (list.empty() ? "" : ", ") + f.name;
    return list.empty() ? "none" : list;
}

/// The families that take a-priori LLRs (--idd).
std::string families_with_priors()
{
    std::string list;
    for (const auto& f : core::detector_families())
        if (f.capabilities.accepts_priors)
            list += (list.empty() ? "" : ", ") + f.name;
    return list;
}

/// Candidate distances per problem a default detector may cost: exhaustive
/// ML up to 4x4 16-QAM (M^nt = 65536); beyond, name the detector.
constexpr double k_default_detector_cost = 65536.0;

/// Without --detectors: the registry's comparison for the shape and
/// modulation (each family says which runs it adds and what a problem costs;
/// massive-MIMO families where no other takes the shape).
std::vector<core::detector_spec> default_detectors(int nr, int nt, core::modulation mod)
{
    auto specs = core::default_comparison({ nr, nt }, mod, k_default_detector_cost);
    if (specs.empty())
        throw usage_error("no default detector takes " + std::to_string(nr) + "x" +
                          std::to_string(nt) + " " + core::to_string(mod) +
                          ": name one with --detectors (families that take it: " +
                          families_taking(nr, nt, mod) + ")");
    return specs;
}

/// Everything the options decide, checked.
struct simulation_config {
    int nr = 4, nt = 4;
    std::string modulation;
    int bits_per_symbol = 0;
    std::vector<core::detector_spec> detectors; ///< one detector chain per entry
    std::vector<double> snr_db;
    uint64_t problems = 0;           ///< per SNR point, a multiple of symbols_per_channel
    uint64_t requested_problems = 0; ///< --problems (uncoded)
    int symbols_per_channel = 1;     ///< S: consecutive problems sharing one H
    std::string backend;
    std::string
        source; ///< "bits" (mimo_channel over random bits) or "gpu" (mimo_channel_source)
    int seed = 0;
    int max_batch = 0;
    std::string json_path;
    std::optional<coded_config> coded; ///< set with --coded

    int bits_per_problem() const { return nt * bits_per_symbol; }

    static simulation_config from(const command_line& cli)
    {
        return checked_setup([&] {
            simulation_config c;
            c.nr = int(cli.integer("nr", 1, core::k_largest_shape));
            c.nt = int(cli.integer("nt", 1, core::k_largest_shape));
            core::mimo_shape{ c.nr, c.nt }.validate();
            const core::constellation constel(
                core::modulation_from_string(cli.text("modulation")));
            c.modulation = core::to_string(constel.kind());
            c.bits_per_symbol = constel.bits_per_symbol();
            c.detectors = cli.is_set("detectors")
                              ? core::parse_detector_list(cli.text("detectors"))
                              : default_detectors(c.nr, c.nt, constel.kind());
            // Every detector is checked against its family (shape, modulation,
            // parameters) now, not in the first flowgraph; one that does not take the
            // shape is refused with the families that do.
            for (const auto& d : c.detectors) {
                const auto& family = core::find_detector_family(d.name);
                try {
                    family.checked({ { c.nr, c.nt }, constel.kind(), d.parameters });
                } catch (const std::invalid_argument& e) {
                    if (family.takes({ c.nr, c.nt }, constel.kind()))
                        throw; // a bad parameter
                    throw usage_error(std::string(e.what()) +
                                      "; the families that take " + std::to_string(c.nr) +
                                      "x" + std::to_string(c.nt) + " " + c.modulation +
                                      ": " + families_taking(c.nr, c.nt, constel.kind()));
                }
            }
            c.snr_db = cli.real_range("snr");
            for (double snr :
                 c.snr_db) // every point's N0 checked in float before any runs
                core::noise_variance_from_snr_db(snr);
            c.symbols_per_channel = int(cli.integer("symbols-per-channel", 1, 1 << 20));
            // Whole channels of S problems: a partial channel at the end would not be
            // detected.
            const uint64_t S = uint64_t(c.symbols_per_channel);
            c.requested_problems = uint64_t(cli.integer("problems", 1, 1LL << 40));
            c.problems = (c.requested_problems + S - 1) / S * S;
            c.backend = core::to_string(core::backend_from_string(cli.text("backend")));
            c.source = cli.text("source");
            if (c.source != "bits" && c.source != "gpu")
                throw usage_error("--source is bits or gpu, got " + c.source);
            if (c.source == "gpu" && core::resolve_backend(core::backend_from_string(
                                         c.backend)) != core::backend::cuda)
                throw usage_error("--source gpu needs the CUDA backend");
            if (c.source == "gpu" && cli.flag("coded").value_or(false))
                throw usage_error("--source gpu is for the uncoded link; --coded encodes "
                                  "transport blocks on the host");
            c.seed = int(cli.integer("seed", 0, 0x7fffffff));
            c.max_batch = int(cli.integer("max-batch", 1, 1 << 24));
            if (cli.is_set("json"))
                c.json_path = cli.text("json");
            if (cli.flag("coded").value_or(false))
                c.coded = coded_from(cli, c);
            return c;
        });
    }

    /// LTE: 36.212's format and the turbo decoder's settings, checked now.
    static void
    turbo_from(const command_line& cli, const simulation_config& c, coded_config& k)
    {
        // NL layers of Qm = Q bits: G is a multiple of NL*Qm, as 5.1.4.1.2 wants.
        const core::transport_block_format format{ k.A, k.G, c.bits_per_symbol, k.NL, 0 };
        format.validate_for_decoding(); // also: enough coded bits for every code block
                                        // (rate <= 1)
        const core::code_block_segmentation seg = format.segmentation();
        k.code_blocks = seg.C;
        k.block_sizes = "K = " + std::to_string(seg.K.front());
        if (seg.K.back() != seg.K.front())
            k.block_sizes += " and " + std::to_string(seg.K.back());
        k.algorithm = cli.is_set("algorithm") ? cli.text("algorithm") : "max-log-map";
        if (k.algorithm != "max-log-map" && k.algorithm != "log-map")
            throw usage_error("--algorithm must be max-log-map or log-map, got '" +
                              k.algorithm + "'");
        if (k.idd && k.algorithm != "max-log-map")
            throw usage_error("--idd decodes max-log-MAP (the idd_receiver block's "
                              "decoder); --algorithm log-map is for one-pass runs");
        k.iterations =
            cli.is_set("iterations") ? int(cli.integer("iterations", 1, 32)) : 6;
        // The decoder's parameters are checked now, not in the first flowgraph.
        core::turbo_decoder_config decoder;
        decoder.iterations = k.iterations;
        decoder.extrinsic_scale = float(k.extrinsic_scale);
        decoder.window = k.window;
        decoder.validate();
    }

    /// NR: 38.212's format and the LDPC decoder's settings, checked now.
    static void
    ldpc_from(const command_line& cli, const simulation_config& c, coded_config& k)
    {
        core::nr_transport_block_format format;
        format.A = k.A;
        format.G = k.G;
        format.Qm = c.bits_per_symbol;
        format.NL = k.NL;
        format.validate();
        const core::nr_segmentation seg = format.segmentation();
        k.code_blocks = seg.C;
        k.block_sizes = "K' = " + std::to_string(seg.K_prime) + " (BG" +
                        std::to_string(seg.base_graph) + ", Zc " +
                        std::to_string(seg.Zc) + ")";
        core::ldpc_decoder_config decoder;
        k.algorithm = cli.is_set("algorithm") ? cli.text("algorithm")
                                              : core::to_string(decoder.algorithm);
        decoder.algorithm = core::ldpc_algorithm_from_string(k.algorithm);
        k.iterations = cli.is_set("iterations") ? int(cli.integer("iterations", 1, 100))
                                                : decoder.iterations;
        decoder.iterations = k.iterations;
        decoder.validate();
    }

    /// The coded link's settings; sets c.problems to the vectors the blocks fill.
    static coded_config coded_from(const command_line& cli, simulation_config& c)
    {
        coded_config k;
        k.A = int(cli.integer("tb-size", 1, 1 << 20));
        k.requested_rate = cli.real("code-rate");
        if (!(k.requested_rate > 0 && k.requested_rate < 1))
            throw usage_error("--code-rate must be between 0 and 1 (exclusive), got " +
                              cli.text("code-rate"));
        if (cli.is_set("idd")) {
            k.idd = int(cli.integer("idd", 1, 16));
            for (const auto& d : c.detectors)
                if (!core::find_detector_family(d.name).capabilities.accepts_priors)
                    throw usage_error("--idd: detector " + d.label() +
                                      " takes no a-priori LLRs; families that do: " +
                                      families_with_priors());
        }
        // The iterative receiver needs whole vectors per block: a block over
        // every stream, rate matched for at most 4 layers.
        k.per_stream = !k.idd && c.nt > k_max_layers_per_block;
        k.NL = k.per_stream ? 1 : std::min(c.nt, k_max_layers_per_block);
        // A block fills whole vectors (nt*Q bits), or with a block per stream whole
        // Q-bit symbols of its stream.
        const int unit = (k.per_stream ? 1 : c.nt) * c.bits_per_symbol;
        k.G = coded_bits_for(k.A, k.requested_rate, unit);
        k.code = cli.text("code");
        if (k.code != "turbo" && k.code != "ldpc")
            throw usage_error("--code must be turbo or ldpc, got '" + k.code + "'");
        k.requested_blocks = uint64_t(cli.integer("blocks", 1, 1LL << 30));
        k.max_blocks = int(cli.integer("max-blocks", 1, 1 << 16));
        if (k.code == "ldpc")
            ldpc_from(cli, c, k);
        else
            turbo_from(cli, c, k);
        // A group of blocks sent together (one, or nt side by side) fills G/unit
        // vectors; the blocks are rounded up to whole groups that fill whole channels.
        const uint64_t group = k.per_stream ? uint64_t(c.nt) : 1;
        const uint64_t vectors = uint64_t(k.G / unit),
                       S = uint64_t(c.symbols_per_channel);
        const uint64_t groups = S / std::gcd(S, vectors);
        const uint64_t step = group * groups;
        k.blocks = (k.requested_blocks + step - 1) / step * step;
        c.problems = k.blocks / group * vectors;
        return k;
    }
};

using core::detector_spec;

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

/// The detector block of one --detectors entry: (H, y) -> LLRs.
gr::mimo_gpu::mimo_detector::sptr make_detector_block(const simulation_config& c,
                                                      const detector_spec& spec,
                                                      double n0,
                                                      bool device_buffers = false)
{
    return gr::mimo_gpu::mimo_detector::make_from_spec(spec,
                                                       c.nr,
                                                       c.nt,
                                                       c.modulation,
                                                       n0,
                                                       c.symbols_per_channel,
                                                       c.backend,
                                                       c.max_batch,
                                                       "erase",
                                                       device_buffers);
}

/// The flowgraph of one SNR point. The transmitted bits fan out to every ber_counter.
/// Runs a started-to-finish flowgraph, calling collect(result, seconds so far)
/// then progress(result) about every `period`, and once more at its end.
template <typename Result, typename Collect>
Result run_to_end(const gr::top_block_sptr& top,
                  std::chrono::milliseconds period,
                  Result r,
                  Collect collect,
                  const std::function<void(const Result&)>& progress)
{
    const auto start = std::chrono::steady_clock::now();
    const auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    };
    top->start();
    auto finished = std::async(std::launch::async, [&top] { top->wait(); });
    while (finished.wait_for(period) != std::future_status::ready) {
        collect(r, seconds());
        progress(r);
    }
    finished.get();
    collect(r, seconds());
    return r;
}

class ber_flowgraph
{
public:
    ber_flowgraph(const simulation_config& c,
                  const std::vector<detector_spec>& detectors,
                  double snr_db)
        : m_top(gr::make_top_block("mimo_gpu_simulate")), m_detectors(detectors)
    {
        if (c.source == "gpu")
            connect_gpu_chains(c, detectors, snr_db);
        else
            connect_bit_chains(c, detectors, snr_db);
    }

    const std::string& active_backend() const { return m_backend; }

private:
    /// Random bits -> mimo_channel -> each detector -> its ber_counter; the bits fan out.
    void connect_bit_chains(const simulation_config& c,
                            const std::vector<detector_spec>& detectors,
                            double snr_db)
    {
        const int bits = c.bits_per_problem();
        const double n0 = core::noise_variance_from_snr_db(snr_db);
        auto source = gr::analog::random_uniform_source_b::make(0, 2, c.seed);
        auto head = gr::blocks::head::make(sizeof(char), c.problems * uint64_t(bits));
        auto to_vector = gr::blocks::stream_to_vector::make(sizeof(char), bits);
        auto channel = gr::mimo_gpu::mimo_channel::make(c.nr,
                                                        c.nt,
                                                        c.modulation,
                                                        snr_db,
                                                        uint64_t(c.seed) + 1,
                                                        c.symbols_per_channel);
        m_top->connect(source, 0, head, 0);
        m_top->connect(head, 0, to_vector, 0);
        m_top->connect(to_vector, 0, channel, 0);

        for (const auto& spec : detectors) {
            auto counter = gr::mimo_gpu::ber_counter::make(bits);
            m_top->connect(to_vector, 0, counter, 0);
            auto det = make_detector_block(c, spec, n0);
            m_top->connect(channel, 0, det, 0);
            m_top->connect(channel, 1, det, 1);
            m_top->connect(det, 0, counter, 1);
            m_backend = det->active_backend();
            m_counters.push_back(counter);
        }
    }

    /// Everything on the GPU: per detector, mimo_channel_source (bits, H, y in
    /// device memory) -> the detector (device buffers) -> its ber_counter (device
    /// buffers). Every chain has its own source with the same seed, hence the same
    /// stream (the generator costs about 0.4 ns a problem), so the chains never
    /// wait for each other's readers. Families that detect only from host memory
    /// (ml, sumis) read host buffers.
    void connect_gpu_chains(const simulation_config& c,
                            const std::vector<detector_spec>& detectors,
                            double snr_db)
    {
        const int bits = c.bits_per_problem();
        const double n0 = core::noise_variance_from_snr_db(snr_db);
        for (const auto& spec : detectors) {
            const bool device =
                core::find_detector_family(spec.name).capabilities.device_path;
            auto source =
                gr::mimo_gpu::mimo_channel_source::make(c.nr,
                                                        c.nt,
                                                        c.modulation,
                                                        snr_db,
                                                        uint64_t(c.seed) + 1,
                                                        c.symbols_per_channel,
                                                        c.problems,
                                                        "cuda",
                                                        std::max(c.max_batch, 65536),
                                                        device);
            auto counter = gr::mimo_gpu::ber_counter::make(bits, device);
            auto det = make_detector_block(c, spec, n0, device);
            m_top->connect(source, 0, det, 0);
            m_top->connect(source, 1, det, 1);
            m_top->connect(source, 2, counter, 0);
            m_top->connect(det, 0, counter, 1);
            m_backend = det->active_backend();
            m_counters.push_back(counter);
        }
    }

public:
    /// Runs the flowgraph to its end, calling progress(results so far) about every
    /// `period`.
    point_result run(double snr_db,
                     std::chrono::milliseconds period,
                     const std::function<void(const point_result&)>& progress)
    {
        point_result r;
        r.snr_db = snr_db;
        r.noise_var = core::noise_variance_from_snr_db(snr_db);
        return run_to_end(
            m_top,
            period,
            r,
            [this](point_result& x, double seconds) { collect(x, seconds); },
            progress);
    }

private:
    void collect(point_result& r, double seconds) const
    {
        r.seconds = seconds;
        r.detectors.clear();
        for (size_t i = 0; i < m_counters.size(); ++i)
            r.detectors.push_back(
                { m_detectors[i], m_counters[i]->bits(), m_counters[i]->errors() });
    }

    gr::top_block_sptr m_top;
    std::vector<detector_spec> m_detectors;
    std::vector<gr::mimo_gpu::ber_counter::sptr> m_counters;
    std::string m_backend;
};

/// Coded-link results of one detector at one SNR point.
struct coded_detector_result {
    detector_spec spec;
    transport_block_error_counter::counts counts;
};

struct coded_point_result {
    point_result
        detected; ///< the detectors' hard decisions on the coded bits (before decoding)
    std::vector<coded_detector_result> decoded;
};

/// The coded flowgraph of one SNR point:
///   random bits -> head(blocks*A) -> transmitted_block_tap -> stream_to_tagged_stream(A)
///     -> tagged_stream_to_pdu => tb_encoder => pdu_stream_source ->
///     stream_to_vector(nt*Q) -> mimo_channel
///     -> mimo_detector (one per --detectors entry)
///     -> vector_to_stream -> stream_to_tagged_stream(G) -> tagged_stream_to_pdu
///     => tb_decoder => transport_block_error_counter
/// (=> message connections). transmitted_block_tap records the transmitted
/// transport blocks for the error counters, and the coded bits with each detector's LLRs
/// to a ber_counter (the BER before decoding).
class coded_flowgraph
{
public:
    coded_flowgraph(const simulation_config& c,
                    const std::vector<detector_spec>& detectors,
                    double snr_db)
        : m_top(gr::make_top_block("mimo_gpu_simulate_coded")), m_detectors(detectors)
    {
        const coded_config& k = *c.coded;
        const int unit = c.bits_per_problem();
        const double n0 = core::noise_variance_from_snr_db(snr_db);
        auto source = gr::analog::random_uniform_source_b::make(0, 2, c.seed);
        auto head = gr::blocks::head::make(sizeof(char), k.blocks * uint64_t(k.A));
        auto sent = std::make_shared<transmitted_blocks>(k.A);
        auto tap = transmitted_block_tap::make(sent);
        auto tb_tags =
            gr::blocks::stream_to_tagged_stream::make(sizeof(char), 1, k.A, "tb_len");
        auto tb_pdus = gr::pdu::tagged_stream_to_pdu::make(gr::types::byte_t, "tb_len");
        gr::basic_block_sptr encoder;
        if (k.code == "ldpc")
            encoder =
                gr::mimo_gpu::nr_tb_encoder::make(k.A, k.G, c.bits_per_symbol, k.NL, 0);
        else
            encoder =
                gr::mimo_gpu::tb_encoder::make(k.A, k.G, c.bits_per_symbol, k.NL, 0);
        m_coded_stream = pdu_stream_source::make(k.G);
        auto to_vector = gr::blocks::stream_to_vector::make(sizeof(char), unit);
        auto channel = gr::mimo_gpu::mimo_channel::make(c.nr,
                                                        c.nt,
                                                        c.modulation,
                                                        snr_db,
                                                        uint64_t(c.seed) + 1,
                                                        c.symbols_per_channel);
        m_top->connect(source, 0, head, 0);
        m_top->connect(head, 0, tap, 0);
        m_top->connect(tap, 0, tb_tags, 0);
        m_top->connect(tb_tags, 0, tb_pdus, 0);
        m_top->msg_connect(tb_pdus, "pdus", encoder, "in");
        m_top->msg_connect(encoder, "out", m_coded_stream, "in");
        if (k.per_stream) {
            // nt blocks side by side, block k on stream k mod nt: G coded bits to
            // each stream in turn, then Q bits of every stream per vector.
            auto to_streams = gr::blocks::deinterleave::make(sizeof(char), k.G);
            auto to_symbols =
                gr::blocks::interleave::make(sizeof(char), c.bits_per_symbol);
            m_top->connect(m_coded_stream, 0, to_streams, 0);
            for (int t = 0; t < c.nt; ++t)
                m_top->connect(to_streams, t, to_symbols, t);
            m_top->connect(to_symbols, 0, to_vector, 0);
        } else {
            m_top->connect(m_coded_stream, 0, to_vector, 0);
        }
        m_top->connect(to_vector, 0, channel, 0);

        for (const auto& spec : detectors) {
            auto det = make_detector_block(c, spec, n0);
            m_top->connect(channel, 0, det, 0);
            m_top->connect(channel, 1, det, 1);
            m_backend = det->active_backend();
            auto detected = gr::mimo_gpu::ber_counter::make(unit);
            m_top->connect(to_vector, 0, detected, 0);
            m_top->connect(det, 0, detected, 1);

            auto errors = transport_block_error_counter::make(sent);
            m_detected.push_back(detected);
            m_errors.push_back(errors);
            if (k.idd) { // the iterative receiver decodes from (H, y) itself
                auto idd = gr::mimo_gpu::idd_receiver::make(
                    spec.name,
                    c.nr,
                    c.nt,
                    c.modulation,
                    k.A,
                    k.G,
                    core::format_parameter_list(spec.parameters),
                    0,
                    k.idd,
                    k.iterations,
                    n0,
                    c.symbols_per_channel,
                    c.backend,
                    k.max_blocks,
                    k.code);
                auto pdus = decoded_block_pdus::make(k.A);
                m_top->connect(channel, 0, idd, 0);
                m_top->connect(channel, 1, idd, 1);
                m_top->connect(idd, 0, pdus, 0);
                m_top->msg_connect(pdus, "out", errors, "in");
                m_decoder_backend = idd->active_backend();
                continue;
            }
            auto llr_stream = gr::blocks::vector_to_stream::make(sizeof(float), unit);
            auto llr_tags = gr::blocks::stream_to_tagged_stream::make(
                sizeof(float), 1, k.G, "llr_len");
            auto llr_pdus =
                gr::pdu::tagged_stream_to_pdu::make(gr::types::float_t, "llr_len");
            gr::basic_block_sptr decoder;
            if (k.code == "ldpc") {
                auto nr = gr::mimo_gpu::nr_tb_decoder::make(k.A,
                                                            k.G,
                                                            c.bits_per_symbol,
                                                            k.NL,
                                                            0,
                                                            0,
                                                            k.algorithm,
                                                            k.iterations,
                                                            c.backend,
                                                            k.max_blocks);
                m_decoder_backend = nr->active_backend();
                decoder = nr;
            } else {
                auto lte = gr::mimo_gpu::tb_decoder::make(k.A,
                                                          k.G,
                                                          c.bits_per_symbol,
                                                          k.NL,
                                                          0,
                                                          k.algorithm,
                                                          k.iterations,
                                                          k.extrinsic_scale,
                                                          k.window,
                                                          c.backend,
                                                          k.max_blocks);
                m_decoder_backend = lte->active_backend();
                decoder = lte;
            }
            m_top->connect(det, 0, llr_stream, 0);
            if (k.per_stream) { // back to block order: Q LLRs per stream, then G per
                                // block
                auto to_streams =
                    gr::blocks::deinterleave::make(sizeof(float), c.bits_per_symbol);
                auto to_blocks = gr::blocks::interleave::make(sizeof(float), k.G);
                m_top->connect(llr_stream, 0, to_streams, 0);
                for (int t = 0; t < c.nt; ++t)
                    m_top->connect(to_streams, t, to_blocks, t);
                m_top->connect(to_blocks, 0, llr_tags, 0);
            } else {
                m_top->connect(llr_stream, 0, llr_tags, 0);
            }
            m_top->connect(llr_tags, 0, llr_pdus, 0);
            m_top->msg_connect(llr_pdus, "pdus", decoder, "in");
            m_top->msg_connect(decoder, "out", errors, "in");
        }
    }

    const std::string& active_backend() const { return m_backend; }
    const std::string& decoder_backend() const { return m_decoder_backend; }
    uint64_t bad_coded_pdus() const { return m_coded_stream->bad_pdus(); }

    /// Runs the flowgraph to its end, calling progress(results so far) about every
    /// `period`.
    coded_point_result run(double snr_db,
                           std::chrono::milliseconds period,
                           const std::function<void(const coded_point_result&)>& progress)
    {
        coded_point_result r;
        r.detected.snr_db = snr_db;
        r.detected.noise_var = core::noise_variance_from_snr_db(snr_db);
        return run_to_end(
            m_top,
            period,
            r,
            [this](coded_point_result& x, double seconds) { collect(x, seconds); },
            progress);
    }

private:
    void collect(coded_point_result& r, double seconds) const
    {
        r.detected.seconds = seconds;
        r.detected.detectors.clear();
        r.decoded.clear();
        for (size_t i = 0; i < m_detected.size(); ++i) {
            r.detected.detectors.push_back(
                { m_detectors[i], m_detected[i]->bits(), m_detected[i]->errors() });
            r.decoded.push_back({ m_detectors[i], m_errors[i]->snapshot() });
        }
    }

    gr::top_block_sptr m_top;
    std::vector<detector_spec> m_detectors;
    std::vector<gr::mimo_gpu::ber_counter::sptr> m_detected;
    std::vector<transport_block_error_counter::sptr> m_errors;
    pdu_stream_source::sptr m_coded_stream;
    std::string m_backend, m_decoder_backend;
};

/// The per-SNR progress line on stderr: rewritten in place on a terminal,
/// printed once per point otherwise (logs of CI runs stay short).
class progress_line
{
public:
    progress_line() : m_tty(isatty(fileno(stderr))) {}
    void update(const std::string& text) const
    {
        if (m_tty)
            std::fprintf(stderr, "\r%s\033[K", text.c_str());
    }
    void finish(const std::string& text) const
    {
        std::fprintf(stderr, m_tty ? "\r%s\033[K\n" : "%s\n", text.c_str());
    }

private:
    bool m_tty;
};

std::string progress_head(double snr_db, double fraction, double seconds)
{
    char buf[96];
    std::snprintf(buf,
                  sizeof buf,
                  "SNR %6.2f dB: %5.1f%% %7.1f s |",
                  snr_db,
                  100.0 * fraction,
                  seconds);
    return buf;
}

/// "SNR ... | N=1 1.234e-02 ..." : each detector's BER so far.
std::string progress_text(const point_result& r, uint64_t bits_per_detector)
{
    uint64_t done = bits_per_detector;
    for (const auto& d : r.detectors)
        done = std::min(done, d.bits);
    std::string line =
        progress_head(r.snr_db,
                      bits_per_detector ? double(done) / double(bits_per_detector) : 1.0,
                      r.seconds);
    char buf[64];
    for (const auto& d : r.detectors) {
        std::snprintf(buf, sizeof buf, " %s %.3e", d.spec.label().c_str(), d.ber());
        line += buf;
    }
    return line;
}

/// "SNR ... | N=1 BLER 1.000e-01 ..." : each detector's block error rate after decoding
/// so far.
std::string progress_text(const coded_point_result& r, uint64_t blocks)
{
    uint64_t done = blocks;
    for (const auto& d : r.decoded)
        done = std::min(done, d.counts.blocks);
    std::string line = progress_head(r.detected.snr_db,
                                     blocks ? double(done) / double(blocks) : 1.0,
                                     r.detected.seconds);
    char buf[64];
    for (const auto& d : r.decoded) {
        std::snprintf(
            buf, sizeof buf, " %s BLER %.3e", d.spec.label().c_str(), d.counts.bler());
        line += buf;
    }
    return line;
}

/// ", S = 14 problems per channel" (nothing for S = 1).
std::string channel_reuse_text(const simulation_config& c)
{
    return c.symbols_per_channel > 1 ? ", S = " + std::to_string(c.symbols_per_channel) +
                                           " problems per channel"
                                     : std::string();
}

void print_table(const simulation_config& c, const std::vector<point_result>& points)
{
    std::printf(
        "\n%s, %d x %d %s%s, %llu problems (%llu bits per detector) per SNR point\n",
        c.coded ? (c.coded->idd ? "BER before decoding (detectors' hard decisions on the "
                                  "coded bits, first pass: no priors)"
                                : "BER before decoding (detectors' hard decisions on the "
                                  "coded bits)")
                : "BER",
        c.nr,
        c.nt,
        c.modulation.c_str(),
        channel_reuse_text(c).c_str(),
        (unsigned long long)c.problems,
        (unsigned long long)(c.problems * uint64_t(c.bits_per_problem())));
    std::printf("%9s", "SNR [dB]");
    for (const auto& d : points.front().detectors)
        std::printf(" %11s", d.spec.label().c_str());
    std::printf(" %9s %12s\n", "wall [s]", "Mbit/s");
    for (const auto& p : points) {
        std::printf("%9.2f", p.snr_db);
        for (const auto& d : p.detectors)
            std::printf(" %11.4e", d.ber());
        std::printf(" %9.3f %12.3f\n", p.seconds, p.detected_mbps());
    }
    std::printf(
        "Mbit/s: bits detected by all %zu detectors of the flowgraph over its wall time\n"
        "(end to end: bit source and channel simulation included%s).\n",
        points.front().detectors.size(),
        c.coded ? ", and channel coding and decoding" : "");
}

std::string describe(const coded_config& k)
{
    char buf[384];
    std::snprintf(buf,
                  sizeof buf,
                  "%s: A = %d -> G = %d coded bits (code rate %.4f, asked %.4f), %d code "
                  "block%s of %s, "
                  "%s, up to %d iterations%s",
                  k.code == "ldpc" ? "NR LDPC" : "LTE turbo",
                  k.A,
                  k.G,
                  k.rate(),
                  k.requested_rate,
                  k.code_blocks,
                  k.code_blocks == 1 ? "" : "s",
                  k.block_sizes.c_str(),
                  k.algorithm.c_str(),
                  k.iterations,
                  k.per_stream ? ", one block per stream side by side (NL = 1)" : "");
    std::string text = buf;
    if (k.idd)
        text += "; iterative receiver (idd_receiver): up to " + std::to_string(k.idd) +
                " detector-decoder passes, priors from the decoder's extrinsics";
    return text;
}

void print_coded_table(const simulation_config& c,
                       const std::vector<coded_point_result>& points)
{
    const coded_config& k = *c.coded;
    std::printf("\nCoded BER and BLER, %d x %d %s%s, transport blocks of %s; %llu "
                "transport blocks per SNR point\n",
                c.nr,
                c.nt,
                c.modulation.c_str(),
                channel_reuse_text(c).c_str(),
                describe(k).c_str(),
                (unsigned long long)k.blocks);
    std::printf("%9s %10s %11s %11s %8s %8s %8s %10s %10s\n",
                "SNR [dB]",
                "detector",
                "coded BER",
                "BLER",
                "blocks",
                "errors",
                "CRC fail",
                "undetected",
                k.idd ? "passes" : "iterations");
    for (const auto& p : points)
        for (const auto& d : p.decoded) {
            const auto& n = d.counts;
            std::printf("%9.2f %10s %11.4e %11.4e %8llu %8llu %8llu %10llu %10.2f\n",
                        p.detected.snr_db,
                        d.spec.label().c_str(),
                        n.ber(),
                        n.bler(),
                        (unsigned long long)n.blocks,
                        (unsigned long long)n.block_errors,
                        (unsigned long long)n.crc_failures,
                        (unsigned long long)n.undetected_errors,
                        n.mean_iterations());
        }
    std::printf("coded BER: decoded information bits in error; BLER: transport blocks "
                "whose CRC failed\n"
                "or whose bits are wrong (undetected: CRC passed, bits wrong); "
                "%s: mean per block.\n",
                k.idd ? "passes (--idd: detector-decoder passes)" : "iterations");
}

void write_json(const simulation_config& c,
                const std::string& active_backend,
                const std::vector<point_result>& points,
                double total_seconds,
                const std::vector<coded_point_result>& coded_points,
                const std::string& decoder_backend)
{
    std::ofstream out(c.json_path);
    if (!out)
        throw std::runtime_error("cannot write the JSON file '" + c.json_path + "'");
    json_writer j(out);
    j.begin_object();
    j.value("program", "mimo_gpu_simulate");
    j.begin_object("config");
    j.value("nr", c.nr).value("nt", c.nt).value("modulation", c.modulation);
    j.value("bits_per_symbol", c.bits_per_symbol);
    std::vector<std::string> labels;
    for (const auto& d : c.detectors)
        labels.push_back(d.label());
    j.values("detectors", labels);
    j.values("snr_db", c.snr_db)
        .value("snr_definition", "Es/N0 per receive antenna, N0 = 10^(-snr/10)");
    j.value("problems_per_point", (unsigned long long)c.problems).value("seed", c.seed);
    j.value("max_batch", c.max_batch);
    j.value("symbols_per_channel", c.symbols_per_channel);
    j.value("source", c.coded ? std::string("bits") : c.source);
    j.value("coded", bool(c.coded));
    j.end_object();
    j.begin_object("backend");
    j.value("requested", c.backend).value("active", active_backend);
    j.value("cuda_available", core::cuda_available());
    j.value("cuda_unavailable_reason", core::cuda_unavailable_reason());
    j.end_object();
    // With --coded these are the detectors' hard decisions on the coded bits.
    j.begin_array("points");
    for (const auto& p : points) {
        j.begin_object();
        j.value("snr_db", p.snr_db)
            .value("noise_var", p.noise_var)
            .value("seconds", p.seconds);
        j.value("detected_mbps", p.detected_mbps());
        j.begin_array("detectors");
        for (const auto& d : p.detectors) {
            j.begin_object();
            j.value("name", d.spec.label()).value("algorithm", d.spec.name);
            j.value("bits", (unsigned long long)d.bits)
                .value("errors", (unsigned long long)d.errors);
            j.value("ber", d.ber());
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.end_array();
    if (c.coded) {
        const coded_config& k = *c.coded;
        j.begin_object("coded");
        j.value("A", k.A)
            .value("G", k.G)
            .value("Qm", c.bits_per_symbol)
            .value("NL", k.NL)
            .value("rv", 0);
        j.value("block_per_stream", k.per_stream);
        j.value("requested_blocks_per_point", (unsigned long long)k.requested_blocks);
        j.value("code_rate", k.rate()).value("requested_code_rate", k.requested_rate);
        j.value("code", k.code)
            .value("code_blocks", k.code_blocks)
            .value("code_block_sizes", k.block_sizes);
        j.value("algorithm", k.algorithm).value("iterations", k.iterations);
        j.value("idd_outer_iterations", k.idd); // 0: one pass, tb_decoder
        j.value("extrinsic_scale", k.extrinsic_scale).value("window", k.window);
        j.value("max_blocks", k.max_blocks);
        j.value("blocks_per_point", (unsigned long long)k.blocks);
        j.value("decoder_backend", decoder_backend);
        j.begin_array("points");
        for (const auto& p : coded_points) {
            j.begin_object();
            j.value("snr_db", p.detected.snr_db).value("noise_var", p.detected.noise_var);
            j.value("seconds", p.detected.seconds);
            j.begin_array("detectors");
            for (const auto& d : p.decoded) {
                const auto& n = d.counts;
                j.begin_object();
                j.value("name", d.spec.label()).value("algorithm", d.spec.name);
                j.value("blocks", (unsigned long long)n.blocks);
                j.value("block_errors", (unsigned long long)n.block_errors)
                    .value("bler", n.bler());
                j.value("crc_failures", (unsigned long long)n.crc_failures);
                j.value("undetected_errors", (unsigned long long)n.undetected_errors);
                j.value("bits", (unsigned long long)n.bits)
                    .value("bit_errors", (unsigned long long)n.bit_errors);
                j.value("ber", n.ber()).value("mean_iterations", n.mean_iterations());
                j.end_object();
            }
            j.end_array();
            j.end_object();
        }
        j.end_array();
        j.end_object();
    }
    j.value("total_seconds", total_seconds);
    j.end_object();
    if (!out)
        throw std::runtime_error("error writing the JSON file '" + c.json_path + "'");
}

/// Throws unless every detector saw all the bits (and, coded, every transport block).
void check_complete(const simulation_config& c,
                    const point_result& p,
                    const coded_point_result* coded)
{
    const uint64_t bits = c.problems * uint64_t(c.bits_per_problem());
    for (const auto& d : p.detectors)
        if (d.bits != bits)
            throw std::runtime_error("detector " + d.spec.label() + " counted " +
                                     std::to_string(d.bits) + " bits instead of " +
                                     std::to_string(bits) +
                                     " (a block stopped early; see the messages above)");
    if (!coded)
        return;
    for (const auto& d : coded->decoded) {
        if (d.counts.bad_pdus)
            throw std::runtime_error(
                "detector " + d.spec.label() + ": " + std::to_string(d.counts.bad_pdus) +
                " malformed PDUs reached the error counter (see the messages above)");
        if (d.counts.blocks != c.coded->blocks)
            throw std::runtime_error("detector " + d.spec.label() + ": " +
                                     std::to_string(d.counts.blocks) +
                                     " transport blocks decoded instead of " +
                                     std::to_string(c.coded->blocks) +
                                     " (a PDU was dropped; see the messages above)");
    }
}

int run(const command_line& cli)
{
    const simulation_config c = simulation_config::from(cli);
    // The blocks log their configuration at info level once per flowgraph, i.e.
    // once per SNR point: keep that for --verbose.
    if (!cli.flag("verbose").value_or(false))
        gr::logging::singleton().set_default_level(gr::log_level::warn);
    const std::vector<detector_spec>& detectors = c.detectors;

    std::fprintf(stderr,
                 "mimo_gpu_simulate: %d x %d %s, detectors",
                 c.nr,
                 c.nt,
                 c.modulation.c_str());
    for (const auto& d : detectors)
        std::fprintf(stderr, " %s", d.label().c_str());
    std::fprintf(stderr,
                 ", %zu SNR points x %llu problems%s, backend %s\n",
                 c.snr_db.size(),
                 (unsigned long long)c.problems,
                 channel_reuse_text(c).c_str(),
                 c.backend.c_str());
    if (!c.coded && c.problems != c.requested_problems)
        std::fprintf(stderr,
                     "(--problems %llu rounded up to whole channels of S = %d)\n",
                     (unsigned long long)c.requested_problems,
                     c.symbols_per_channel);
    if (c.coded) {
        std::fprintf(stderr,
                     "coded link: %llu transport blocks per SNR point, %s\n",
                     (unsigned long long)c.coded->blocks,
                     describe(*c.coded).c_str());
        if (c.coded->blocks != c.coded->requested_blocks) {
            std::string why;
            if (c.coded->per_stream)
                why = "groups of NT = " + std::to_string(c.nt) + " blocks side by side";
            if (c.symbols_per_channel > 1)
                why += (why.empty() ? "" : " and ") +
                       std::string("whole channels of S = ") +
                       std::to_string(c.symbols_per_channel) + " problems";
            std::fprintf(stderr,
                         "(--blocks %llu rounded up so that the blocks fill %s)\n",
                         (unsigned long long)c.coded->requested_blocks,
                         why.c_str());
        }
    }

    const progress_line progress;
    const uint64_t bits_per_detector = c.problems * uint64_t(c.bits_per_problem());
    std::vector<point_result> points;
    std::vector<coded_point_result> coded_points;
    std::string active_backend, decoder_backend;
    const auto start = std::chrono::steady_clock::now();
    for (double snr : c.snr_db) {
        if (c.coded) {
            coded_flowgraph fg =
                checked_setup([&] { return coded_flowgraph(c, detectors, snr); });
            active_backend = fg.active_backend();
            decoder_backend = fg.decoder_backend();
            coded_points.push_back(fg.run(
                snr, std::chrono::milliseconds(250), [&](const coded_point_result& r) {
                    progress.update(progress_text(r, c.coded->blocks));
                }));
            progress.finish(progress_text(coded_points.back(), c.coded->blocks));
            points.push_back(coded_points.back().detected);
            if (fg.bad_coded_pdus())
                throw std::runtime_error(std::to_string(fg.bad_coded_pdus()) +
                                         " coded transport blocks of the wrong length "
                                         "(see the messages above)");
            check_complete(c, points.back(), &coded_points.back());
        } else {
            ber_flowgraph fg =
                checked_setup([&] { return ber_flowgraph(c, detectors, snr); });
            active_backend = fg.active_backend();
            points.push_back(
                fg.run(snr, std::chrono::milliseconds(250), [&](const point_result& r) {
                    progress.update(progress_text(r, bits_per_detector));
                }));
            progress.finish(progress_text(points.back(), bits_per_detector));
            check_complete(c, points.back(), nullptr);
        }
    }
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    print_table(c, points);
    if (c.coded)
        print_coded_table(c, coded_points);
    std::printf("backend: %s (requested %s)%s%s; total %.2f s\n",
                active_backend.c_str(),
                c.backend.c_str(),
                core::cuda_available() ? "" : "; CUDA unavailable: ",
                core::cuda_available() ? "" : core::cuda_unavailable_reason().c_str(),
                total);
    if (c.coded)
        std::printf("%s decoder backend: %s\n",
                    c.coded->code == "ldpc" ? "LDPC" : "turbo",
                    decoder_backend.c_str());
    if (!c.json_path.empty()) {
        write_json(c, active_backend, points, total, coded_points, decoder_backend);
        std::printf("wrote %s (plot it with mimo_gpu_plot.py %s)\n",
                    c.json_path.c_str(),
                    c.json_path.c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_simulate",
        "Bit error rate of MIMO detectors (any registered family, --detectors) over a\n"
        "range of SNRs, each point a GNU Radio flowgraph:\n"
        "  random bits -> head -> stream_to_vector(nt*Q) -> mimo_channel\n"
        "    -> mimo_detector -> ber_counter   (one chain per --detectors entry)\n"
        "With --coded, the coded link: the bits are LTE transport blocks (PDUs of A "
        "bits)\n"
        "  -> tb_encoder (CRC24A, segmentation, turbo code, rate matching to G bits)\n"
        "  -> pdu_to_tagged_stream -> stream_to_vector(nt*Q) -> mimo_channel -> "
        "detectors\n"
        "  -> vector_to_stream -> tagged_stream_to_pdu (G LLRs) -> tb_decoder\n"
        "  -> transport block error counter (against the transmitted blocks),\n"
        "giving the coded BER and the block error rate (BLER) of every detector next to\n"
        "its BER before decoding.\n"
        "The detectors and the turbo decoder run on the GPU when one is usable\n"
        "(--backend auto), else on the CPU.",
        "SNR is Es/N0 per receive antenna (unit-energy symbols, i.i.d. CN(0,1) channel\n"
        "taps), N0 = 10^(-SNR/10). Every SNR point reuses the same seed: the same bits,\n"
        "channels and noise shape, only the noise power changes.\n"
        "Progress goes to stderr, the table to stdout. Exit code 2: bad option; 1: "
        "run-time error.\n"
        "Example:\n"
        "  mimo_gpu_simulate --nr 4 --nt 4 --modulation 16qam --snr 0:24:2 --json "
        "ber.json\n"
        "  mimo_gpu_plot.py ber.json -o ber.png\n"
        "  mimo_gpu_simulate --nr 2 --nt 2 --modulation 16qam --snr 0:16:2 --coded "
        "--tb-size 1000 \\\n"
        "      --code-rate 0.5 --blocks 500 --json coded.json\n"
        "  mimo_gpu_simulate --nr 128 --nt 16 --modulation 16qam --symbols-per-channel "
        "14 \\\n"
        "      --detectors mmse,mmse_cg:2,mmse_cg:3 --snr -6:0:2 --json massive.json\n"
        "Coded link: G = round((A + 24) / R) rounded up to a multiple of nt*Q, so that "
        "every\n"
        "transport block fills whole MIMO vectors (NL = nt layers of Qm = Q bits, rv "
        "0);\n"
        "the code rate actually used, A/G, is printed. --problems is ignored: a point\n"
        "has --blocks transport blocks, G/(nt*Q) problems each.\n"
        "With NT > 4 (beyond LTE's 4 layers per block: multi-user, massive MIMO) every\n"
        "stream carries its own transport blocks (NL = 1, G a multiple of Q): NT blocks\n"
        "are sent side by side, block k on stream k mod NT, and --blocks is rounded up "
        "to\n"
        "a multiple of NT.\n"
        "Channel reuse (--symbols-per-channel S): the channel draws one H per S "
        "consecutive\n"
        "problems (block fading, e.g. a subcarrier over the S OFDM symbols of a frame) "
        "and\n"
        "every detector gets S received vectors per H. --problems is rounded up to "
        "whole\n"
        "channels; with --coded, --blocks is rounded up until the blocks fill whole\n"
        "channels (the rounded counts are printed).\n"
        "Without --detectors, shapes that no small-MIMO family takes (NR or NT > 8) get\n"
        "the families that take them at their defaults (mmse, mmse_cg:3); a detector\n"
        "named with --detectors that does not take the shape is refused (exit code 2)\n"
        "with the list of families that do.\n");
    cli.add_option("nr", "NR", "receive antennas", "4");
    cli.add_option("nt", "NT", "transmitted streams (NT <= NR)", "4");
    cli.add_option(
        "modulation", "NAME", "qpsk, 16qam, 64qam, 256qam or 1024qam", "16qam");
    cli.add_option(
        "detectors",
        "LIST",
        "detectors to compare, FAMILY[:VALUE][:NAME=VALUE...] each, e.g. "
        "nway:1,nway:4,mtt,"
        "ot:llr_clip=4,ml (a bare VALUE sets the family's first parameter). Families: " +
            [] {
                std::string names;
                for (const auto& n : core::detector_names())
                    names += (names.empty() ? "" : ", ") + n;
                return names;
            }() +
            ". Default: nway:1..NT, mtt, ot, fsd, sfsd and kbest:16 where they take the "
            "shape and "
            "modulation, ml while M^NT <= 65536; for shapes none of those take (massive "
            "MIMO): "
            "mmse and mmse_cg:3");
    cli.add_option(
        "snr", "A:B:STEP", "SNR points in dB, STOP included, or one value", "0:24:3");
    cli.add_option(
        "problems", "COUNT", "problems (resource elements) per SNR point", "10000");
    cli.add_option(
        "backend", "NAME", "auto, cpu or cuda (auto honours MIMO_GPU_BACKEND)", "auto");
    cli.add_option("seed", "S", "seed of the bits and of the channel", "1");
    // 2100: with a detector per --detectors entry sharing one channel, smaller frames
    // keep the shared host buffers in cache (H100, 9 detectors: 3.3 s per 2M-problem
    // point at 2100 against 4.1-4.8 s at 8400; docs/flowgraphs.md).
    cli.add_option(
        "max-batch", "B", "most problems a block hands to the core per call", "2100");
    cli.add_option(
        "source",
        "KIND",
        "uncoded: bits (random bits -> mimo_channel, host memory) or gpu "
        "(mimo_channel_source: bits, channel and noise drawn on the GPU, every "
        "block on device buffers; CUDA)",
        "bits");
    cli.add_option(
        "symbols-per-channel",
        "S",
        "consecutive problems sharing one channel matrix H (channel reuse; see below)",
        "1");
    cli.add_option("json", "FILE", "write the configuration and results as JSON");
    cli.add_flag("coded",
                 "simulate the coded link: LTE turbo-coded transport blocks, or NR LDPC "
                 "ones with --code ldpc (see below)");
    cli.add_option("code",
                   "NAME",
                   "--coded: turbo (LTE 36.212: tb_encoder / tb_decoder) or ldpc (NR "
                   "38.212: nr_tb_encoder / nr_tb_decoder)",
                   "turbo");
    cli.add_option("tb-size", "A", "--coded: transport block bits", "1000");
    cli.add_option(
        "code-rate", "R", "--coded: code rate, 0 < R < 1 (sets G, see below)", "0.5");
    cli.add_option("blocks", "COUNT", "--coded: transport blocks per SNR point", "200");
    cli.add_option(
        "iterations",
        "I",
        "--coded: most decoder iterations: turbo 1..32 (default 6), ldpc 1..100 "
        "(default 10)");
    cli.add_option("algorithm",
                   "NAME",
                   "--coded: turbo: max-log-map (extrinsic scaling 0.75, the default) or "
                   "log-map; ldpc: offset-min-sum (the default), normalized-min-sum or "
                   "sum-product");
    cli.add_option(
        "max-blocks", "B", "--coded: most transport blocks per decoder call", "64");
    cli.add_option("idd",
                   "N",
                   "--coded: receive with each detector (one that takes a-priori LLRs) "
                   "in an iterative receiver of up to N detector-decoder passes "
                   "(idd_receiver; N = 1 is one pass)");
    cli.add_flag("verbose",
                 "show the blocks' information messages (one set per SNR point)");
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
