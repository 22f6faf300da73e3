// The erasure policy (include/mimo_gpu/erasures.h): every family, on each
// backend, erases a bad problem (LLRs 0), detects the rest of its batch as if
// the bad one were not there, and reports the bad ones exactly; `stop` throws.
// Also the scratch bound of large calls (parts of at most max_problems_per_run).
#include "test_support.h"

#include <mimo_gpu/batched_qr.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// 2x2 QPSK problems with bad ones: a zero H at 5, a rank-one H at 7, NaN in H
/// for 100..169 (70: more than a report lists) and an Inf in y at 250.
struct bad_batch {
    static constexpr size_t size = 300;
    problem_batch pb;
    std::vector<bool> bad;
    std::vector<erased_problem> first; // what the report must list: every erased problem

    explicit bad_batch(uint64_t seed)
        : pb({ 2, 2 }, modulation::qpsk, size, 10.0, seed), bad(size, false)
    {
        const size_t m = 4; // nr * nt
        std::fill_n(pb.H.begin() + 5 * m, m, cfloat(0, 0));
        pb.H[7 * m + 1] = pb.H[7 * m] * 3.0f; // row 0: column 1 = 3 x column 0
        pb.H[7 * m + 3] = pb.H[7 * m + 2] * 3.0f;
        for (size_t p = 100; p < 170; ++p)
            pb.H[p * m + (p % 4)] = cfloat(NAN, 1.0f);
        pb.y[250 * 2 + 1] = cfloat(0.0f, INFINITY);
        for (size_t p : { size_t(5), size_t(7), size_t(250) })
            bad[p] = true;
        for (size_t p = 100; p < 170; ++p)
            bad[p] = true;
        first.push_back({ 5, erasure_cause::singular_channel });
        first.push_back({ 7, erasure_cause::singular_channel });
        for (size_t p = 100; p < 170; ++p) // every one listed, beyond k_listed_erasures
            first.push_back({ p, erasure_cause::non_finite_input });
        first.push_back({ 250, erasure_cause::non_finite_input });
    }
    size_t erased() const { return size_t(std::count(bad.begin(), bad.end(), true)); }

    detector_input input() const
    {
        detector_input in;
        in.H = pb.H.data();
        in.y = pb.y.data();
        in.channels = size;
        in.n0 = pb.n0;
        return in;
    }
};

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

/// A family that regularises rank-deficient channels (MMSE) erases only the
/// non-finite problems of `b`.
bool erased_by(const detector& det, const bad_batch& b, size_t p)
{
    return b.bad[p] && (det.capabilities().erases_rank_deficient || (p != 5 && p != 7));
}

/// LLRs of the problems of `b` that `det` does not erase, detected on their own.
std::vector<float> good_alone(detector& det, const bad_batch& b)
{
    std::vector<cfloat> H, y;
    for (size_t p = 0; p < b.size; ++p)
        if (!erased_by(det, b, p)) {
            H.insert(H.end(), b.pb.H.begin() + p * 4, b.pb.H.begin() + p * 4 + 4);
            y.insert(y.end(), b.pb.y.begin() + p * 2, b.pb.y.begin() + p * 2 + 2);
        }
    std::vector<float> llr(H.size());
    const auto report = det.detect(H.data(), y.data(), H.size() / 4, b.pb.n0, llr.data());
    EXPECT_EQ(report.erased, 0u);
    return llr;
}

void expect_erased_and_rest_intact(const detector& det,
                                   const std::vector<float>& llr,
                                   const std::vector<float>& alone,
                                   const bad_batch& b,
                                   const std::string& what)
{
    size_t k = 0;
    for (size_t p = 0; p < b.size; ++p)
        for (int i = 0; i < 4; ++i)
            if (erased_by(det, b, p))
                EXPECT_EQ(llr[p * 4 + i], 0.0f) << what << " erased problem " << p;
            else
                EXPECT_EQ(llr[p * 4 + i], alone[k++]) << what << " good problem " << p;
}

} // namespace

TEST(erasures, every_family_erases_bad_problems_and_detects_the_rest)
{
    const bad_batch b(fresh_seed());
    for (const auto& name : detector_names()) {
        auto det = make_detector(name, { b.pb.shape, b.pb.mod, {} }, backend::cpu);
        EXPECT_EQ(det->bad_problems(), bad_problem_policy::stop); // the core's default
        det->set_bad_problem_policy(bad_problem_policy::erase);
        std::vector<float> llr(b.size * 4, NAN);
        const detection_report r = det->detect(b.input(), llr.data());
        const bool regularises = !det->capabilities().erases_rank_deficient;
        EXPECT_EQ(r.problems, b.size) << name;
        EXPECT_EQ(r.erased, b.erased() - (regularises ? 2 : 0)) << name;
        if (!regularises) {
            EXPECT_EQ(r.first_erased, b.first) << name;
        } else {
            ASSERT_FALSE(r.first_erased.empty()) << name;
            EXPECT_EQ(r.first_erased[0].index, 100u) << name;
            for (int i = 0; i < 4; ++i) // a zero H: the regularised result sees no user
                EXPECT_EQ(llr[5 * 4 + i], 0.0f) << name;
        }
        expect_erased_and_rest_intact(*det, llr, good_alone(*det, b), b, name);

        det->set_bad_problem_policy(bad_problem_policy::stop);
        const std::string e = error_of([&] { det->detect(b.input(), llr.data()); });
        EXPECT_NE(e.find(regularises ? "problem 100 of the batch contains a non-finite"
                                     : "problem 5 of the batch has a rank-deficient"),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find(regularises ? "71 of 300" : "73 of 300"), std::string::npos)
            << e;
    }
}

TEST(erasures, qr_items_of_bad_problems_are_nan_and_the_detector_erases_them)
{
    const bad_batch b(fresh_seed());
    batched_qr qr(b.pb.shape, 2, backend::cpu);
    qr.set_bad_problem_policy(bad_problem_policy::erase);
    const size_t floats = qr.layout().floats_per_item();
    std::vector<float> items(b.size * floats);
    const auto r = qr.run(b.pb.H.data(), b.pb.y.data(), b.size, items.data());
    EXPECT_EQ(r.erased, b.erased());
    EXPECT_EQ(r.first_erased, b.first);
    for (size_t p = 0; p < b.size; ++p)
        EXPECT_EQ(std::isnan(items[p * floats]), bool(b.bad[p])) << p;
    nway_ssfe_detector det({ b.pb.shape, b.pb.mod, 2, 8.0f }, backend::cpu);
    det.set_bad_problem_policy(bad_problem_policy::erase);
    std::vector<float> llr(b.size * 4);
    const auto d = det.detect_qr(items.data(), b.size, b.pb.n0, llr.data());
    EXPECT_EQ(d.erased, b.erased());
    expect_erased_and_rest_intact(det, llr, good_alone(det, b), b, "qr + detect_qr");
    qr.set_bad_problem_policy(bad_problem_policy::stop);
    EXPECT_THROW(qr.run(b.pb.H.data(), b.pb.y.data(), b.size, items.data()),
                 std::invalid_argument);
}

TEST(erasures, cuda_erases_and_reports_as_the_cpu_does)
{
    MIMO_GPU_REQUIRE_CUDA();
    const bad_batch b(fresh_seed());
    for (const auto& name : detector_names()) {
        auto cpu = make_detector(name, { b.pb.shape, b.pb.mod, {} }, backend::cpu);
        auto gpu = make_detector(name, { b.pb.shape, b.pb.mod, {} }, backend::cuda);
        cpu->set_bad_problem_policy(bad_problem_policy::erase);
        gpu->set_bad_problem_policy(bad_problem_policy::erase);
        std::vector<float> want(b.size * 4, NAN), got(want.size(), NAN);
        const auto rc = cpu->detect(b.input(), want.data());
        const auto rg = gpu->detect(b.input(), got.data());
        const bool exact = cpu->capabilities().bit_identical_backends;
        expect_backends_agree(got, want, exact, name + " host path with bad problems");
        EXPECT_EQ(rg.erased, rc.erased) << name;
        EXPECT_EQ(rg.first_erased, rc.first_erased) << name;
        gpu->set_bad_problem_policy(bad_problem_policy::stop);
        EXPECT_THROW(gpu->detect(b.input(), got.data()), std::invalid_argument) << name;
        gpu->set_bad_problem_policy(bad_problem_policy::erase);
#ifdef MIMO_GPU_HAVE_CUDA
        cfloat *dH = nullptr, *dy = nullptr;
        float* dllr = nullptr;
        ASSERT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&dH), b.pb.H.size() * sizeof(cfloat)),
            cudaSuccess);
        ASSERT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&dy), b.pb.y.size() * sizeof(cfloat)),
            cudaSuccess);
        ASSERT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&dllr), 2 * want.size() * sizeof(float)),
            cudaSuccess);
        cudaMemcpy(
            dH, b.pb.H.data(), b.pb.H.size() * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemcpy(
            dy, b.pb.y.data(), b.pb.y.size() * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemset(dllr, 0xff, 2 * want.size() * sizeof(float)); // NaN
        detector_input din = b.input();
        din.H = dH;
        din.y = dy;
        bool has_device_path = true;
        try {
            gpu->detect_device(din, dllr, nullptr); // two calls, one report
            gpu->detect_device(din, dllr + want.size(), nullptr);
        } catch (const std::logic_error&) {
            has_device_path = false;
        }
        if (has_device_path) {
            const auto rd = gpu->check_device_status(nullptr);
            EXPECT_EQ(rd.problems, 2 * b.size) << name;
            EXPECT_EQ(rd.erased, 2 * rc.erased) << name;
            // Every erased problem of both calls is listed, the second call's after the
            // first's.
            ASSERT_EQ(rd.first_erased.size(), 2 * rc.erased) << name;
            for (size_t i = 0; i < rc.erased; ++i) {
                EXPECT_EQ(rd.first_erased[i], rc.first_erased[i]) << name;
                EXPECT_EQ(rd.first_erased[rc.erased + i].index,
                          rc.first_erased[i].index + b.size)
                    << name;
            }
            std::vector<float> two(2 * want.size());
            cudaMemcpy(
                two.data(), dllr, two.size() * sizeof(float), cudaMemcpyDeviceToHost);
            expect_backends_agree(
                std::vector<float>(two.begin(), two.begin() + want.size()),
                want,
                exact,
                name + " device path, first call");
            expect_backends_agree(
                std::vector<float>(two.begin() + want.size(), two.end()),
                want,
                exact,
                name + " device path, second call");
            EXPECT_EQ(gpu->check_device_status(nullptr).erased, 0u) << name; // cleared
        }
        cudaFree(dH);
        cudaFree(dy);
        cudaFree(dllr);
#endif
    }
}

namespace {
/// Peak resident memory (VmHWM) in bytes; reset_peak() restarts it (Linux >= 4.0).
size_t peak_rss()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return size_t(std::stoull(line.substr(6))) * 1024;
    return 0;
}
bool reset_peak()
{
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    return bool(clear);
}
} // namespace

// A call larger than max_problems_per_run is detected in parts: the scratch
// stays bounded (N-way 8x8 with 8 passes keeps 8.7 KB of QR items per problem,
// 15x its input) and erasures are reported with their place in the whole call.
TEST(erasures, large_calls_are_detected_in_parts_with_bounded_scratch)
{
    auto det = make_detector(
        "nway", { { 8, 8 }, modulation::qpsk, { { "passes", 8 } } }, backend::cpu);
    det->set_bad_problem_policy(bad_problem_policy::erase);
    const size_t batch = 30000, part = det->max_problems_per_run();
    ASSERT_LT(part, batch / 2);
    EXPECT_LE(det->scratch_bytes(size_t(1) << 30),
              size_t(80) << 20); // any call: <= 80 MiB
    problem_batch pb({ 8, 8 }, modulation::qpsk, batch, 20.0, fresh_seed());
    pb.y[3 * 8] = cfloat(NAN, 0);
    pb.H[(part + 17) * 64 + 5] = cfloat(INFINITY, 0); // in the second part
    std::vector<float> llr(batch * 16);
    std::fill(llr.begin(), llr.end(), 1.0f); // touch the output before measuring
    det->detect(
        pb.H.data(), pb.y.data(), 16, pb.n0, llr.data()); // warm up: tables, threads
    const bool measured = reset_peak();
    const size_t before = peak_rss();
    const auto r = det->detect(pb.H.data(), pb.y.data(), batch, pb.n0, llr.data());
    const size_t growth = peak_rss() - before;
    ASSERT_EQ(r.erased, 2u);
    EXPECT_EQ(r.first_erased[0].index, 3u);
    EXPECT_EQ(r.first_erased[1].index, part + 17);
    std::printf("[ memory   ] peak grew by %zu bytes (bound %zu; measured: %d)\n",
                growth,
                det->scratch_bytes(batch),
                int(measured));
    if (measured) { // unbounded, the QR items alone would be 261 MB
        EXPECT_LT(growth, det->scratch_bytes(batch) + (size_t(16) << 20))
            << "peak grew by " << growth << " bytes";
    }
}

// Issue 23: an all-zero QR item (R = 0: no channel at all) gave LLRs of +-1000
// from nothing; it is erased as singular, on both backends.
TEST(erasures, all_zero_qr_items_are_erased_as_singular)
{
    const problem_batch pb({ 2, 2 }, modulation::qpsk, 8, 10.0, fresh_seed());
    batched_qr qr(pb.shape, 2, backend::cpu);
    const size_t floats = qr.layout().floats_per_item();
    std::vector<float> items(pb.batch * floats);
    qr.run(pb.H.data(), pb.y.data(), pb.batch, items.data());
    std::fill_n(items.begin() + 3 * floats, floats, 0.0f);
    for (backend b : { backend::cpu, backend::cuda }) {
        if (b == backend::cuda && !mimo_gpu::cuda_available())
            continue;
        nway_ssfe_detector det({ pb.shape, pb.mod, 2, 8.0f }, b);
        det.set_bad_problem_policy(bad_problem_policy::erase);
        std::vector<float> llr(pb.batch * 4, NAN);
        const auto r = det.detect_qr(items.data(), pb.batch, pb.n0, llr.data());
        EXPECT_EQ(r.erased, 1u);
        ASSERT_EQ(r.first_erased.size(), 1u);
        EXPECT_EQ(r.first_erased[0],
                  (erased_problem{ 3, erasure_cause::singular_channel }));
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(llr[3 * 4 + i], 0.0f);
        det.set_bad_problem_policy(bad_problem_policy::stop);
        EXPECT_THROW(det.detect_qr(items.data(), pb.batch, pb.n0, llr.data()),
                     std::invalid_argument);
    }
}
