// mimo_gpu_bench --sumis-paper (bench_sumis.h): whole detect() calls from
// host memory to host memory (pinned where CUDA is used), median of trials.
#include "bench_sumis.h"
#include "bench_util.h"

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_registry.h>

#include <cstdio>

using namespace mimo_gpu;

namespace mimo_gpu_apps {

namespace {

struct paper_cell {
    int nt, M;
    double openmp_ms,
        gpu_ms; // per vector, 2x Xeon E5-2697 (24 cores) and Tesla K40c; -1: not given
};
// Tables 2 and 3 (T_P); cells the paper prints garbled are derived from T_S / S_P.
const paper_cell k_paper[] = {
    { 8, 16, 0.04, 0.27 },       { 8, 64, 0.08, 0.25 },       { 8, 256, 0.21, 0.51 },
    { 8, 1024, 1.35, 2.82 },     { 24, 16, 0.18, -1 },        { 24, 64, 0.25, 0.46 },
    { 24, 256, 0.63, -1 },       { 24, 1024, 2.67, 1.52 },    { 48, 16, 0.67, 1.29 },
    { 48, 64, 1.06, 1.49 },      { 48, 256, 1.79, 2.36 },     { 48, 1024, 5.57, 3.50 },
    { 100, 16, 2.19, 5.85 },     { 100, 64, 3.06, 6.26 },     { 100, 256, 4.24, 7.30 },
    { 100, 1024, 13.08, 21.10 }, { 200, 16, 17.0, 39.30 },    { 200, 64, 18.80, 40.4 },
    { 200, 256, 21.86, 42.3 },   { 200, 1024, 33.26, 70.80 },
};

modulation modulation_of(int M)
{
    switch (M) {
    case 16:
        return modulation::qam16;
    case 64:
        return modulation::qam64;
    case 256:
        return modulation::qam256;
    default:
        return modulation::qam1024;
    }
}

} // namespace

std::vector<sumis_row> bench_sumis_paper(backend b, int trials, uint64_t seed, int max_nt)
{
    std::vector<sumis_row> rows;
    const bool cuda = b == backend::cuda;
    for (const paper_cell& p : k_paper) {
        if (p.nt > max_nt)
            continue;
        sumis_row r;
        r.nt = p.nt;
        r.M = p.M;
        r.paper_gpu_ms = p.gpu_ms;
        r.paper_openmp_ms = p.openmp_ms;
        const mimo_shape shape{ p.nt, p.nt };
        const modulation mod = modulation_of(p.M);
        std::fprintf(stderr, "  SUMIS %dx%d %d-QAM ns=3 ...\n", p.nt, p.nt, p.M);
        auto det = make_detector("sumis", { shape, mod, { { "ns", 3 } } }, b);
        det->set_bad_problem_policy(bad_problem_policy::erase);
        // The batch: 16 channels x 64 vectors on the GPU; on the CPU a few vectors.
        const size_t C = cuda ? 16 : 1, S = cuda ? 64 : (p.nt <= 24 ? 8 : 1);
        r.vectors = int(C * S);
        channel_simulator sim(shape, mod, seed + p.nt + p.M);
        std::vector<uint8_t> bits(C * S * sim.bits_per_problem());
        sim.random_bits(bits.data(), bits.size());
        std::vector<cfloat> Hc(C * p.nt * p.nt),
            y(C * S * p.nt); // one H per channel, its S vectors through it
        sim.run(bits.data(),
                C,
                int(S),
                noise_variance_from_snr_db(20.0),
                Hc.data(),
                y.data());
        std::vector<float> llr(C * S * det->llrs_per_problem());
        detector_input in;
        in.H = Hc.data();
        in.y = y.data();
        in.channels = C;
        in.symbols_per_channel = int(S);
        in.n0 = noise_variance_from_snr_db(20.0);
        const int t = cuda ? trials : 1;
        r.batch_ms = host_median_ms(t, [&](int) { det->detect(in, llr.data()); });
        in.channels = 1;
        in.symbols_per_channel = 1;
        r.single_ms = host_median_ms(t, [&](int) { det->detect(in, llr.data()); });
        rows.push_back(r);
    }
    return rows;
}

void print_sumis_table(const std::vector<sumis_row>& rows, const std::string& device)
{
    std::printf("\nSUMIS (ns = 3, both stages), the parallel SUMIS paper's Tables 2-3 "
                "workloads, %s; ms per received "
                "vector (detect() host to host); paper: Tesla K40c (GPU) and 2x Xeon "
                "E5-2697, 24 threads (OpenMP)\n",
                device.c_str());
    std::printf("%4s %5s | %10s %12s %9s %9s | %9s %9s | %8s %8s\n",
                "nT",
                "M",
                "1 vector",
                "batch/vector",
                "vectors/s",
                "Mbit/s",
                "x paperGPU",
                "x OpenMP",
                "paperGPU",
                "paperOMP");
    for (const sumis_row& r : rows) {
        const double per = r.batch_ms / r.vectors;
        const double bits = double(r.nt) * (r.M == 16    ? 4
                                            : r.M == 64  ? 6
                                            : r.M == 256 ? 8
                                                         : 10);
        std::printf(
            "%4d %5d | %10s %12s %9s %9s | %9s %9s | %8s %8s\n",
            r.nt,
            r.M,
            fmt(r.single_ms, "%.3f").c_str(),
            fmt(per, "%.4f").c_str(),
            fmt(1e3 / per, "%.0f").c_str(),
            fmt(bits / per / 1e3, "%.1f").c_str(),
            fmt(r.paper_gpu_ms > 0 ? r.paper_gpu_ms / per : -1, "%.0fx").c_str(),
            fmt(r.paper_openmp_ms > 0 ? r.paper_openmp_ms / per : -1, "%.0fx").c_str(),
            fmt(r.paper_gpu_ms, "%.2f").c_str(),
            fmt(r.paper_openmp_ms, "%.2f").c_str());
    }
}

void write_sumis_json(json_writer& j, const std::vector<sumis_row>& rows)
{
    j.begin_array("sumis");
    for (const sumis_row& r : rows) {
        j.begin_object();
        j.value("nt", r.nt)
            .value("nr", r.nt)
            .value("M", r.M)
            .value("ns", r.ns)
            .value("vectors", r.vectors);
        j.value("single_vector_ms", r.single_ms).value("batch_ms", r.batch_ms);
        j.value("batch_ms_per_vector", r.batch_ms / r.vectors);
        j.value("paper_gpu_ms", r.paper_gpu_ms)
            .value("paper_openmp_ms", r.paper_openmp_ms);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
