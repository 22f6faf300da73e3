// mimo_gpu_bench: QR kernel, detection kernel and end-to-end (host memory to
// host memory) times of the N-way detector for the configurations of the
// paper's Tables I-III (2x2 and 4x4, 16- and 64-QAM, N = 1..nt, 8400 problems),
// with the paper's GTX 560 Ti numbers beside them; the MTT and OT detectors on
// the MTT thesis' Tables 4.1-4.2 workloads, with its C1060 numbers beside them;
// with --detectors, any registered detector family by name (bench_detectors.cc);
// and the turbo decoder; with --channel-generator, the device-resident simulation
// source and bit-error counter (bench_channel_generator.cc). Core library only, so it
// runs on a GPU machine without GNU Radio.
//
// Method (docs/benchmarks.md): floors first (the measured pinned copy bandwidth
// for the bytes that must cross PCIe); kernels timed with CUDA events around
// `reps` back-to-back launches over rotating input sets, median of `trials`;
// end to end timed on the host clock around whole detect() calls, median.
#include "bench/bench_channel_generator.h"
#include "bench/bench_detectors.h"
#include "bench/bench_front_end.h"
#include "bench/bench_ldpc.h"
#include "bench/bench_mmse.h"
#include "bench/bench_sumis.h"
#include "bench/bench_transport_block.h"
#include "bench/bench_util.h"
#include "command_line.h"
#include "json_writer.h"

#include <mimo_gpu/batched_qr.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

struct paper_times { // milliseconds for 8400 problems, GTX 560 Ti (Tables I, II, III); 0
                     // = not given
    double qr, detect, total;
};

struct bench_case {
    mimo_shape shape;
    modulation mod;
    int passes;
    paper_times paper;
};

std::vector<bench_case> paper_cases()
{
    const double qr2[] = { 0.030, 0.052 }, qr4[] = { 0.137, 0.257, 0.399, 0.501 };
    const double d2_16[] = { 0.0768, 0.159 }, d4_16[] = { 0.164, 0.332, 0.500, 0.665 };
    const double d2_64[] = { 0.524, 1.040 }, d4_64[] = { 0.833, 1.658, 2.474, 3.297 };
    const double t2_16[] = { 0.342, 0.462 }, t4_16[] = { 0.739, 1.048, 1.349, 1.629 };
    const double t2_64[] = { 0.818, 1.363 }, t4_64[] = { 1.457, 2.415, 3.390, 4.30 };
    std::vector<bench_case> cases;
    for (int n = 1; n <= 2; ++n)
        cases.push_back({ { 2, 2 },
                          modulation::qam16,
                          n,
                          { qr2[n - 1], d2_16[n - 1], t2_16[n - 1] } });
    for (int n = 1; n <= 4; ++n)
        cases.push_back({ { 4, 4 },
                          modulation::qam16,
                          n,
                          { qr4[n - 1], d4_16[n - 1], t4_16[n - 1] } });
    for (int n = 1; n <= 2; ++n)
        cases.push_back({ { 2, 2 },
                          modulation::qam64,
                          n,
                          { qr2[n - 1], d2_64[n - 1], t2_64[n - 1] } });
    for (int n = 1; n <= 4; ++n)
        cases.push_back({ { 4, 4 },
                          modulation::qam64,
                          n,
                          { qr4[n - 1], d4_64[n - 1], t4_64[n - 1] } });
    return cases;
}

struct result {
    bench_case c;
    double qr_ms = -1, detect_ms = -1, fused_ms = -1, qr_stream_ms = -1,
           detect_stream_ms = -1, end_to_end_ms = -1, end_to_end_pageable_ms = -1;
    double floor_ms = -1;
    size_t bits = 0;
};

#ifdef MIMO_GPU_HAVE_CUDA

void bench_cuda(
    result& r, size_t batch, int trials, int reps, double h2d_bandwidth, uint64_t seed)
{
    const bench_case& c = r.c;
    constexpr int sets = 8;
    input_sets in(c.shape, c.mod, batch, sets, seed);
    const size_t nH = batch * c.shape.nr * c.shape.nt, ny = batch * c.shape.nr;
    batched_qr qr(c.shape, c.passes, backend::cuda);
    nway_ssfe_detector det({ c.shape, c.mod, c.passes, 0.0f }, backend::cuda);
    const size_t n_items = batch * qr.layout().floats_per_item(),
                 n_llr = batch * det.llrs_per_problem();
    const float n0 = noise_variance_from_snr_db(15.0);

    const staged_sets st(in);
    const auto &dH = st.dH, &dy = st.dy, &hH = st.hH, &hy = st.hy;
    cuda_array<float> d_items(n_items * sets, false), d_llr(n_llr, false),
        h_llr(n_llr, true);
    cudaStream_t s;
    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    auto qr_launch = [&](int i) {
        qr.run_device(
            dH[i % sets]->p, dy[i % sets]->p, batch, d_items.p + (i % sets) * n_items, s);
    };
    auto detect_launch = [&](int i) {
        det.detect_qr_device(d_items.p + (i % sets) * n_items, batch, n0, d_llr.p, s);
    };
    // Each check collects the fault reports of the launches since the last one,
    // outside the timed region (kernel_median_ms).
    const auto qr_check = [&] { qr.check_device_status(s); };
    const auto detect_check = [&] { det.check_device_status(s); };
    r.qr_stream_ms = kernel_median_ms(s, trials, reps, false, qr_launch, qr_check);
    r.qr_ms = kernel_median_ms(s, trials, reps, true, qr_launch, qr_check);
    r.detect_stream_ms =
        kernel_median_ms(s, trials, reps, false, detect_launch, detect_check);
    r.detect_ms = kernel_median_ms(s, trials, reps, true, detect_launch, detect_check);
    r.fused_ms = kernel_median_ms(
        s,
        trials,
        reps,
        true,
        [&](int i) {
            det.detect_device(dH[i % sets]->p, dy[i % sets]->p, batch, n0, d_llr.p, s);
        },
        detect_check);
    det.check_device_status(s);
    r.end_to_end_ms = host_median_ms(trials * 4, [&](int i) {
        det.detect(hH[i % sets]->p, hy[i % sets]->p, batch, n0, h_llr.p);
    });
    std::vector<float> llr(n_llr);
    r.end_to_end_pageable_ms = host_median_ms(trials * 4, [&](int i) {
        det.detect(in.H[i % sets].data(), in.y[i % sets].data(), batch, n0, llr.data());
    });
    cudaStreamDestroy(s);
    const double bytes_in = double(nH + ny) * sizeof(cfloat),
                 bytes_out = double(n_llr) * sizeof(float);
    r.floor_ms =
        (bytes_in + bytes_out) / h2d_bandwidth * 1e3; // copies in and out, not overlapped
}
#endif

void bench_cpu(result& r, size_t batch, int trials, uint64_t seed)
{
    input_sets in(r.c.shape, r.c.mod, batch, 2, seed);
    nway_ssfe_detector det({ r.c.shape, r.c.mod, r.c.passes, 0.0f }, backend::cpu);
    std::vector<float> llr(batch * det.llrs_per_problem());
    const float n0 = noise_variance_from_snr_db(15.0);
    r.end_to_end_pageable_ms = r.end_to_end_ms = host_median_ms(trials, [&](int i) {
        det.detect(in.H[i % 2].data(), in.y[i % 2].data(), batch, n0, llr.data());
    });
}

// ---- turbo decoder (thesis Table 5.3 style) ---------------------------------

struct turbo_case {
    std::string name; // "K=6144" or "K=40..6144"
    std::vector<int> K;
    map_algorithm algorithm;
    int iterations;
    int window;
    int training; // turbo_decoder_config::training
};

struct turbo_result {
    turbo_case c;
    size_t info_bits = 0;
    double kernel_ms = -1, end_to_end_ms = -1, floor_ms = -1;
};

/// BPSK LLRs at 1.5 dB Eb/N0 of random code blocks (the decoder's work does not depend on
/// the values, but realistic inputs keep any data-dependent path honest).
std::vector<float> turbo_input(const std::vector<int>& K, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> llr;
    llr.reserve(lte_turbo_decoder::input_floats(K));
    for (int k : K) {
        std::vector<uint8_t> c(k), d0(k + 4), d1(k + 4), d2(k + 4);
        for (auto& b : c)
            b = uint8_t(rng() >> 63);
        turbo_encode(c.data(), k, d0.data(), d1.data(), d2.data());
        const float sigma2 = float(1.0 / (2.0 / 3.0 * std::pow(10.0, 0.15)));
        for (const auto* d : { &d0, &d1, &d2 })
            for (uint8_t b : *d)
                llr.push_back(2.0f *
                              ((b ? -1.0f : 1.0f) + std::sqrt(sigma2) * normal(rng)) /
                              sigma2);
    }
    return llr;
}

std::vector<turbo_case>
turbo_cases(size_t blocks, uint64_t seed, const std::vector<int>& trainings)
{
    std::vector<turbo_case> cases;
    const std::vector<int> k6144(blocks, 6144);
    std::vector<int> mixed;
    std::mt19937_64 rng(seed);
    const auto& sizes = qpp_interleaver::block_sizes();
    size_t bits = 0;
    while (bits < blocks * 6144) {
        mixed.push_back(sizes[rng() % sizes.size()]);
        bits += size_t(mixed.back());
    }
    for (int t : trainings)
        for (map_algorithm a : { map_algorithm::max_log_map, map_algorithm::log_map }) {
            for (int it : { 1, 2, 4, 6, 8 })
                cases.push_back({ "K=6144", k6144, a, it, 64, t });
            for (int w : { 32, 128, 6144 })
                cases.push_back({ "K=6144", k6144, a, 6, w, t });
            cases.push_back({ "K=40..6144", mixed, a, 6, 64, t });
        }
    return cases;
}

#ifdef MIMO_GPU_HAVE_CUDA
void bench_turbo_cuda(turbo_result& r, int trials, double h2d_bandwidth, uint64_t seed)
{
    const std::vector<float> llr = turbo_input(r.c.K, seed);
    const size_t n_llr = llr.size(), n_bits = lte_turbo_decoder::output_bits(r.c.K);
    turbo_decoder_config cfg;
    cfg.algorithm = r.c.algorithm;
    cfg.iterations = r.c.iterations;
    cfg.window = r.c.window;
    cfg.training = r.c.training;
    lte_turbo_decoder dec(cfg, backend::cuda);
    cuda_array<float> h_llr(n_llr, true), d_llr(n_llr, false);
    cuda_array<uint8_t> h_bits(n_bits, true), d_bits(n_bits, false);
    std::copy(llr.begin(), llr.end(), h_llr.p);
    BENCH_CHECK(
        cudaMemcpy(d_llr.p, h_llr.p, n_llr * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t s;
    BENCH_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    r.kernel_ms = kernel_median_ms(s, trials, 1, false, [&](int) {
        dec.decode_device(r.c.K, d_llr.p, d_bits.p, nullptr, s);
    });
    dec.check_device_status(s);
    r.end_to_end_ms =
        host_median_ms(trials, [&](int) { dec.decode(r.c.K, h_llr.p, h_bits.p); });
    cudaStreamDestroy(s);
    r.floor_ms = double(n_llr * sizeof(float) + n_bits) / h2d_bandwidth * 1e3;
}
#endif

void bench_turbo_cpu(turbo_result& r, int trials, uint64_t seed)
{
    const std::vector<float> llr = turbo_input(r.c.K, seed);
    turbo_decoder_config cfg;
    cfg.algorithm = r.c.algorithm;
    cfg.iterations = r.c.iterations;
    cfg.window = r.c.window;
    cfg.training = r.c.training;
    lte_turbo_decoder dec(cfg, backend::cpu);
    std::vector<uint8_t> bits(lte_turbo_decoder::output_bits(r.c.K));
    r.end_to_end_ms =
        host_median_ms(trials, [&](int) { dec.decode(r.c.K, llr.data(), bits.data()); });
}

// ---- detector tables by name (bench_detectors.cc) ---------------------------

/// What the detector section runs: the MTT thesis table by default, the --detectors list
/// when given.
struct detector_plan {
    bool run = false;
    std::string table; // "mtt_thesis", "fsd_paper" or "detectors"
    std::vector<detector_spec> specs;
    std::vector<detector_workload> workloads;
};

detector_plan plan_detectors(const command_line& cli, bool skip_detector)
{
    detector_plan plan;
    const bool listed = cli.is_set("detectors"),
               fsd = cli.flag("fsd-paper").value_or(false);
    if ((listed || fsd) && skip_detector)
        throw usage_error("--detectors and --fsd-paper exclude --skip-detector");
    plan.run = !skip_detector;
    plan.table = fsd ? "fsd_paper" : listed ? "detectors" : "mtt_thesis";
    const std::string defaults =
        fsd ? "fsd,sfsd,kbest:8,kbest:16,kbest:32,kbest:64" : "mtt,ot";
    plan.specs = checked_setup(
        [&] { return parse_bench_detectors(listed ? cli.text("detectors") : defaults); });
    const size_t problems = size_t(cli.integer("problems", 0, 1 << 24));
    plan.workloads = cli.is_set("shapes") ? parse_workloads(cli.text("shapes"), problems)
                     : fsd                ? fsd_paper_workloads()
                                          : thesis_workloads(problems);
    return plan;
}

std::string
detector_table_title(const detector_plan& plan, const std::string& device, backend b)
{
    const std::string where =
        device + ", backend " + to_string(b) + ", one H per problem";
    if (plan.table == "mtt_thesis")
        return "MTT and OT detectors, the MTT thesis' Tables 4.1-4.2 workloads (2x2: 8 x "
               "16384 problems, 4x4: "
               "8 x 8192): " +
               where + " (times in ms)";
    if (plan.table == "fsd_paper")
        return "FSD, SFSD and K-best, the FSD paper's Tables 1-2 workloads (4x4, Nc = "
               "150..1200 subcarriers x 7 "
               "symbols): " +
               where + " (times in ms)";
    return "detectors by name: " + where + " (times in ms)";
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_bench",
        "Times QR, N-way detection and end to end for the N-way paper's Tables I-III, "
        "the MTT and OT "
        "detectors for the MTT thesis' Tables 4.1-4.2, and the turbo decoder; or, with "
        "--detectors, any "
        "registered detector by name.",
        "N-way tables: kernel times use CUDA events over a CUDA graph of back-to-back "
        "launches (median "
        "of trials; the JSON also has plain stream launches); end-to-end times are whole "
        "detect() calls "
        "from pinned host memory to pinned host memory (and from pageable memory), "
        "median. The 'floor' "
        "column is the bytes that must cross PCIe over the measured pinned bandwidth.\n\n"
        "Detector tables (the MTT/OT table by default, --detectors LIST instead): each "
        "detector on each "
        "--shapes workload through the detector interface only: kernel time of "
        "detect_device() on device "
        "buffers (CUDA only; '-' for a family without a device path), end to end of "
        "detect() from pinned "
        "and from pageable host memory, Mbit/s = problems * nt * log2 M / time, and the "
        "PCIe floor both "
        "ways (in and out overlapping: max(in, out) / bandwidth; one after the other: "
        "(in + out) / "
        "bandwidth). A workload a family refuses is skipped with a note. With "
        "--detectors the N-way "
        "tables are not run; the turbo decoder runs unless --turbo-blocks 0.\n"
        "Registered detectors:" +
            [] {
                std::string names;
                for (const auto& f : detector_families())
                    names += "\n  " + f.name + ": " + f.summary;
                return names;
            }() +
            "\n");
    cli.add_option("batch",
                   "N",
                   "problems per batch (the paper: 8400, one LTE 20 MHz slot)",
                   "8400");
    cli.add_option(
        "trials", "N", "timed trials per measurement (the median is reported)", "25");
    cli.add_option("reps",
                   "N",
                   "kernel launches per timed trial (the detector tables: about 20 ms of "
                   "launches, at most N)",
                   "50");
    cli.add_option("backend", "NAME", "auto, cpu or cuda", "auto");
    cli.add_option("json", "FILE", "also write the results as JSON to FILE");
    cli.add_option("seed", "N", "seed of the random inputs", "1");
    cli.add_option("turbo-blocks",
                   "N",
                   "code blocks of K = 6144 per decoder batch (0: skip the decoder)",
                   "256");
    cli.add_option("turbo-training",
                   "LIST",
                   "the turbo decoder's training stages per window side, comma separated "
                   "(each runs every case)",
                   std::to_string(turbo_decoder_config{}.training));
    cli.add_flag("skip-detector",
                 "skip the detector tables (N-way and MTT/OT): only the turbo decoder");
    cli.add_flag(
        "fsd-paper",
        "the FSD paper's Tables 1-2 workloads (4x4, Nc = 150..1200 subcarriers x 7 "
        "symbols) with FSD, "
        "SFSD and K-best 8..64 (or --detectors) instead of the N-way and MTT/OT tables");
    cli.add_flag(
        "mmse-paper",
        "the massive-MIMO soft MMSE paper's Tables I-II (128x16 and 256x32, 16-QAM, "
        "N_scr = 128, "
        "Cholesky and CG; one stream, then pipelined over in-flight slots and "
        "--devices), hand kernels "
        "beside cuBLAS/cuSOLVER, and NR frames (3276 x 14), instead of the other tables");
    cli.add_flag(
        "sumis-paper",
        "the parallel SUMIS paper's Tables 2-3 workloads (nT = nR = 8..200, 16- to "
        "1024-QAM, ns = 3): "
        "ms per vector alone and in a batch of 1024, instead of the other tables");
    cli.add_option("sumis-max-nt", "N", "largest nT of --sumis-paper", "200");
    cli.add_flag("front-end",
                 "the OFDM receiver front end (LTE 20 MHz and NR 100 MHz grids, 4x4): "
                 "resource elements per "
                 "second on the CPU and CUDA beside the NR 100 MHz 4x4 requirement, "
                 "instead of the other tables");
    cli.add_flag(
        "channel-generator",
        "the channel generator (generate_device) and the bit-error counter "
        "(count_bit_errors_device) at 65536 problems per call (4x4 16-QAM, also S = 14 "
        "and 8x8 256-QAM) beside the byte floor and 100 M problems/s, instead of the "
        "other tables");
    cli.add_flag("tb-device",
                 "transport blocks (A = 6120, one code block of K = 6144, rate 1/3 and "
                 "~1/2) decoded from "
                 "device LLRs to device bits (decode_device: de-rate-matching, turbo, "
                 "desegmentation and CRC "
                 "on the GPU), float and int8 input, beside decode() host to host, "
                 "instead of the other tables");
    cli.add_option("tb-count", "N", "transport blocks per call of --tb-device", "256");
    cli.add_flag(
        "ldpc",
        "the NR LDPC decoder (BG1 Zc 384 rates 1/3, 1/2, 8/9; BG2 Zc 384 rate 1/5; 5 "
        "and 10 iterations): kernel and end-to-end Gbit/s, float and int8, beside "
        "the PCIe floor (CUDA), or the CPU engine on this machine's cores, instead "
        "of the other tables");
    cli.add_option(
        "ldpc-batches",
        "LIST",
        "--ldpc code blocks per call, comma separated (the CPU uses the first)",
        "32,128,512,1024");
    cli.add_option("tb-int8-scale",
                   "S",
                   "--tb-device int8 input: LLR = S * value (q = round(LLR / S))",
                   "0.125");
    cli.add_option(
        "devices",
        "LIST",
        "CUDA devices of the --mmse-paper multi-GPU rows, e.g. 0,1 (0,0: one GPU "
        "listed twice)",
        "0");
    cli.add_option(
        "mmse-seconds", "S", "run length of each --mmse-paper pipeline measurement", "1");
    cli.add_option(
        "mmse-repeats",
        "N",
        "--mmse-paper pipeline measurements per row (median and spread reported)",
        "3");
    cli.add_option("detectors",
                   "LIST",
                   "time these detectors instead of the N-way and MTT/OT tables, e.g. "
                   "nway:1,nway:4,mtt,ot,ml "
                   "(NAME[:VALUE][:PARAM=VALUE...], the first parameter unnamed)");
    cli.add_option("shapes",
                   "LIST",
                   "detector-table workloads NRxNT[:MODULATION[:PROBLEMS]], e.g. "
                   "2x2:qpsk:131072,4x4:64qam:65536; "
                   "no modulation: qpsk, 16qam and 64qam (default: the MTT thesis' 2x2 "
                   "with 131072 problems and 4x4 "
                   "with 65536, each qpsk, 16qam, 64qam)");
    cli.add_option("problems",
                   "N",
                   "problems per detector-table workload whose --shapes entry gives none "
                   "(0: the thesis' 131072 for "
                   "2x2, 65536 otherwise)",
                   "0");
    cli.add_option("max-exhaustive",
                   "N",
                   "skip a family with exact max-log LLRs (an exhaustive search, e.g. "
                   "ml) where M^nt > N",
                   "65536");
    return run_program(cli, argc, argv, [&]() -> int {
        const size_t batch = size_t(cli.integer("batch", 1, 1 << 22));
        const int trials = int(cli.integer("trials", 1, 100000)),
                  reps = int(cli.integer("reps", 1, 100000));
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));
        const backend b = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        const bool skip_detector = cli.flag("skip-detector").value_or(false);
        detector_plan plan = plan_detectors(cli, skip_detector);
        const bool mmse_paper = cli.flag("mmse-paper").value_or(false);
        const bool sumis_paper = cli.flag("sumis-paper").value_or(false);
        const bool front_end = cli.flag("front-end").value_or(false);
        const bool generator = cli.flag("channel-generator").value_or(false);
        const bool tb_device = cli.flag("tb-device").value_or(false);
        const bool ldpc = cli.flag("ldpc").value_or(false);
        const bool other_tables =
            mmse_paper || sumis_paper || front_end || generator || tb_device || ldpc;
        if (other_tables)
            plan.run = false;
        const double max_exhaustive = double(cli.integer("max-exhaustive", 1, 1LL << 40));

        std::string device =
            "CPU (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
        double h2d = 0, d2h = 0;
#ifdef MIMO_GPU_HAVE_CUDA
        if (b == backend::cuda) {
            cudaDeviceProp prop{};
            BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
            device = prop.name;
            h2d = measure_h2d_bandwidth();
            d2h = measure_pinned_bandwidth(cudaMemcpyDeviceToHost);
            std::fprintf(stderr,
                         "device %s, %d SMs; pinned host-to-device %.1f GB/s, "
                         "device-to-host %.1f GB/s\n",
                         prop.name,
                         prop.multiProcessorCount,
                         h2d / 1e9,
                         d2h / 1e9);
        }
#endif
        const bool run_detector = !skip_detector && !other_tables &&
                                  plan.table == "mtt_thesis"; // the N-way paper tables
        std::vector<result> results;
        for (const bench_case& c :
             run_detector ? paper_cases() : std::vector<bench_case>{}) {
            result r;
            r.c = c;
            r.bits = batch * c.shape.nt * constellation(c.mod).bits_per_symbol();
            std::fprintf(stderr,
                         "  %dx%d %s N=%d ...\n",
                         c.shape.nr,
                         c.shape.nt,
                         to_string(c.mod).c_str(),
                         c.passes);
#ifdef MIMO_GPU_HAVE_CUDA
            if (b == backend::cuda)
                bench_cuda(r, batch, trials, reps, h2d, seed);
            else
#endif
                bench_cpu(r, batch, std::max(3, trials / 5), seed);
            results.push_back(r);
        }

        if (run_detector) { // the N-way paper tables (not with --detectors)
            std::printf("\nmimo_gpu_bench: %s, backend %s, %zu problems per batch (times "
                        "in ms, Mbps of detected bits)\n",
                        device.c_str(),
                        to_string(b).c_str(),
                        batch);
            std::printf(
                "%-14s %2s | %8s %8s %8s %8s %7s | %9s %9s %8s %8s %7s | %8s %8s\n",
                "config",
                "N",
                "QR",
                "detect",
                "sum",
                "H,y->L",
                "x paper",
                "e2e",
                "e2e-page",
                "floor",
                "Mbps",
                "x paper",
                "paperQR+D",
                "paperE2E");
            for (const result& r : results) {
                const double sum = r.qr_ms >= 0 ? r.qr_ms + r.detect_ms : -1;
                const double paper_sum = r.c.paper.qr + r.c.paper.detect;
                char cfg[32];
                std::snprintf(cfg,
                              sizeof cfg,
                              "%dx%d %s",
                              r.c.shape.nr,
                              r.c.shape.nt,
                              to_string(r.c.mod).c_str());
                std::printf(
                    "%-14s %2d | %8s %8s %8s %8s %7s | %9s %9s %8s %8s %7s | %8s %8s\n",
                    cfg,
                    r.c.passes,
                    fmt(r.qr_ms).c_str(),
                    fmt(r.detect_ms).c_str(),
                    fmt(sum).c_str(),
                    fmt(r.fused_ms).c_str(),
                    fmt(sum > 0 ? paper_sum / sum : -1, "%.1fx").c_str(),
                    fmt(r.end_to_end_ms).c_str(),
                    fmt(r.end_to_end_pageable_ms).c_str(),
                    fmt(r.floor_ms).c_str(),
                    fmt(mbps(r.bits, r.end_to_end_ms), "%.0f").c_str(),
                    fmt(r.c.paper.total / r.end_to_end_ms, "%.1fx").c_str(),
                    fmt(paper_sum).c_str(),
                    fmt(r.c.paper.total).c_str());
            }
        }

        std::vector<detector_row> detector_rows;
        if (plan.run) {
            detector_bench_options options;
            options.backend = b;
            options.trials = trials;
            options.max_reps = reps;
            options.seed = seed;
            options.h2d_bandwidth = h2d;
            options.d2h_bandwidth = d2h;
            options.max_exhaustive = max_exhaustive;
            detector_rows = bench_detectors(plan.specs, plan.workloads, options);
            print_detector_table(
                detector_table_title(plan, device, b), detector_rows, options);
        }

        std::vector<mmse_row> mmse_rows;
        if (mmse_paper) {
            mmse_bench_options options;
            options.backend = b;
            options.trials = trials;
            options.seed = seed;
            options.h2d_bandwidth = h2d;
            options.d2h_bandwidth = d2h;
            options.seconds_per_point = cli.real("mmse-seconds");
            options.repeats = int(cli.integer("mmse-repeats", 1, 100));
            options.devices.clear();
            std::stringstream list(cli.text("devices"));
            for (std::string item; std::getline(list, item, ',');)
                options.devices.push_back(checked_setup([&] { return std::stoi(item); }));
            if (options.devices.empty())
                throw usage_error("--devices needs at least one device");
            mmse_rows = bench_mmse_paper(options);
            print_mmse_tables(mmse_rows, device);
        }

        std::vector<sumis_row> sumis_rows;
        if (sumis_paper) {
            sumis_rows = bench_sumis_paper(
                b, trials, seed, int(cli.integer("sumis-max-nt", 1, 256)));
            print_sumis_table(sumis_rows, device);
        }

        std::vector<front_end_row> front_end_rows;
        if (front_end) {
            front_end_rows = bench_front_end(b, trials, seed, h2d);
            print_front_end_table(front_end_rows, device);
        }

        std::vector<channel_generator_row> generator_rows;
        if (generator) {
            generator_rows = bench_channel_generator(b, trials, reps, seed);
            print_channel_generator_table(generator_rows, device);
        }
        std::vector<tb_device_row> tb_rows;
        tb_device_options tb_options;
        if (tb_device) {
            tb_options.backend = b;
            tb_options.trials = trials;
            tb_options.seed = seed;
            tb_options.count = size_t(cli.integer("tb-count", 1, 100000));
            tb_options.int8_scale = float(cli.real("tb-int8-scale"));
            if (!(tb_options.int8_scale > 0.0f && std::isfinite(tb_options.int8_scale)))
                throw usage_error("--tb-int8-scale must be finite and > 0");
            tb_options.h2d_bandwidth = h2d;
            tb_rows = bench_transport_blocks(tb_options);
            print_transport_block_table(tb_rows, device, tb_options);
        }

        std::vector<ldpc_bench_row> ldpc_rows;
        if (ldpc) {
            ldpc_bench_options o;
            o.backend = b;
            o.trials = trials;
            o.reps = reps;
            o.seed = seed;
            o.h2d_bandwidth = h2d;
            o.batches.clear();
            std::stringstream list(cli.text("ldpc-batches"));
            for (std::string item; std::getline(list, item, ',');) {
                char* end = nullptr;
                const long v = std::strtol(item.c_str(), &end, 10);
                if (item.empty() || *end || v < 1 || v > 65536)
                    throw usage_error("--ldpc-batches: '" + item +
                                      "' is not a count 1..65536");
                o.batches.push_back(size_t(v));
            }
            if (o.batches.empty())
                throw usage_error("--ldpc-batches needs at least one count");
            ldpc_rows = bench_ldpc(o);
            print_ldpc_table(ldpc_rows, device);
        }

        const size_t turbo_blocks =
            other_tables ? 0 : size_t(cli.integer("turbo-blocks", 0, 100000));
        std::vector<turbo_result> turbo;
        std::vector<int> trainings;
        {
            std::stringstream list(cli.text("turbo-training"));
            for (std::string item; std::getline(list, item, ',');)
                trainings.push_back(int(checked_setup([&] { return std::stol(item); })));
        }
        for (const turbo_case& c : turbo_blocks
                                       ? turbo_cases(turbo_blocks, seed, trainings)
                                       : std::vector<turbo_case>{}) {
            turbo_result r;
            r.c = c;
            r.info_bits = lte_turbo_decoder::output_bits(c.K);
            std::fprintf(stderr,
                         "  turbo %s %s %d it W=%d T=%d ...\n",
                         c.name.c_str(),
                         c.algorithm == map_algorithm::log_map ? "log-MAP"
                                                               : "max-log-MAP",
                         c.iterations,
                         c.window,
                         c.training);
#ifdef MIMO_GPU_HAVE_CUDA
            if (b == backend::cuda)
                bench_turbo_cuda(r, std::max(3, trials / 3), h2d, seed);
            else
#endif
                bench_turbo_cpu(r, 3, seed);
            turbo.push_back(r);
        }
        if (!turbo.empty()) {
            std::printf("\nturbo decoder: %s, backend %s, %zu code blocks of K = 6144 "
                        "per batch (or the same bits in "
                        "mixed K); Mbit/s of information bits\n",
                        device.c_str(),
                        to_string(b).c_str(),
                        turbo_blocks);
            std::printf("%-11s %-12s %4s %6s %4s %4s | %9s %9s | %9s %9s | %8s\n",
                        "K",
                        "algorithm",
                        "iter",
                        "W",
                        "P",
                        "T",
                        "kernel ms",
                        "Mbit/s",
                        "e2e ms",
                        "Mbit/s",
                        "floor ms");
            for (const turbo_result& r : turbo) {
                const int P = (6144 + r.c.window - 1) / r.c.window;
                std::printf("%-11s %-12s %4d %6d %4s %4d | %9s %9s | %9s %9s | %8s\n",
                            r.c.name.c_str(),
                            r.c.algorithm == map_algorithm::log_map ? "log-MAP"
                                                                    : "max-log-MAP",
                            r.c.iterations,
                            r.c.window,
                            r.c.name == "K=6144" ? std::to_string(P).c_str() : "-",
                            r.c.training,
                            fmt(r.kernel_ms, "%.3f").c_str(),
                            fmt(mbps(r.info_bits, r.kernel_ms), "%.1f").c_str(),
                            fmt(r.end_to_end_ms, "%.3f").c_str(),
                            fmt(mbps(r.info_bits, r.end_to_end_ms), "%.1f").c_str(),
                            fmt(r.floor_ms, "%.3f").c_str());
            }
        }

        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            const std::time_t now = std::time(nullptr);
            char date[32];
            std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
            j.begin_object();
            j.value("program", "mimo_gpu_bench")
                .value("device", device)
                .value("backend", to_string(b));
            j.value("date", date)
                .value("batch", (unsigned long)batch)
                .value("trials", trials)
                .value("reps", reps);
            j.value("pinned_h2d_GBps", h2d / 1e9).value("pinned_d2h_GBps", d2h / 1e9);
            j.begin_array("results");
            for (const result& r : results) {
                j.begin_object();
                j.value("nr", r.c.shape.nr)
                    .value("nt", r.c.shape.nt)
                    .value("modulation", to_string(r.c.mod));
                j.value("passes", r.c.passes).value("bits", (unsigned long)r.bits);
                j.value("qr_kernel_ms", r.qr_ms).value("detect_kernel_ms", r.detect_ms);
                j.value("channel_to_llr_kernel_ms",
                        r.fused_ms); // the kernel(s) detect(H, y) runs
                j.value("qr_kernel_stream_launch_ms", r.qr_stream_ms)
                    .value("detect_kernel_stream_launch_ms", r.detect_stream_ms);
                j.value("end_to_end_pinned_ms", r.end_to_end_ms)
                    .value("end_to_end_pageable_ms", r.end_to_end_pageable_ms);
                j.value("transfer_floor_ms", r.floor_ms)
                    .value("end_to_end_Mbps", mbps(r.bits, r.end_to_end_ms));
                j.value("paper_qr_ms", r.c.paper.qr)
                    .value("paper_detect_ms", r.c.paper.detect);
                j.value("paper_total_ms", r.c.paper.total);
                j.end_object();
            }
            j.end_array();
            j.begin_array("turbo_decoder");
            for (const turbo_result& r : turbo) {
                j.begin_object();
                j.value("K", r.c.name)
                    .value("blocks", (unsigned long)r.c.K.size())
                    .value("info_bits", (unsigned long)r.info_bits);
                j.value("algorithm",
                        r.c.algorithm == map_algorithm::log_map ? "log-map"
                                                                : "max-log-map");
                j.value("iterations", r.c.iterations)
                    .value("window", r.c.window)
                    .value("training", r.c.training);
                j.value("kernel_ms", r.kernel_ms)
                    .value("end_to_end_ms", r.end_to_end_ms)
                    .value("transfer_floor_ms", r.floor_ms);
                j.value("kernel_Mbps", mbps(r.info_bits, r.kernel_ms))
                    .value("end_to_end_Mbps", mbps(r.info_bits, r.end_to_end_ms));
                j.end_object();
            }
            j.end_array();
            write_detector_json(j, plan.table, detector_rows);
            if (!mmse_rows.empty())
                write_mmse_json(j, mmse_rows);
            if (!sumis_rows.empty())
                write_sumis_json(j, sumis_rows);
            if (!front_end_rows.empty())
                write_front_end_json(j, front_end_rows);
            if (!generator_rows.empty())
                write_channel_generator_json(j, generator_rows);
            if (!tb_rows.empty())
                write_transport_block_json(j, tb_rows, tb_options);
            if (!ldpc_rows.empty())
                write_ldpc_json(j, ldpc_rows);
            j.end_object();
            out << "\n";
            std::fprintf(stderr, "wrote %s\n", cli.text("json").c_str());
        }
        return 0;
    });
}
