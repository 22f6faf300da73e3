// The CUDA backend against the CPU reference on fresh random inputs: every
// output element is checked, and outputs are poisoned with NaN first so an
// element the GPU never wrote cannot pass. Skips where no GPU is usable.
#include "test_support.h"

#include <mimo_gpu/batched_qr.h>
#include <mimo_gpu/ml_detector.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// Relative agreement demanded of CUDA against CPU (the 1e-3); the two
/// run the same float operations, so in practice they agree to the bit.
void expect_close(const std::vector<float>& cuda,
                  const std::vector<float>& cpu,
                  const std::string& what)
{
    ASSERT_EQ(cuda.size(), cpu.size());
    size_t bitwise = 0;
    double worst = 0;
    for (size_t i = 0; i < cpu.size(); ++i) {
        ASSERT_FALSE(std::isnan(cuda[i])) << what << ": element " << i << " not written";
        const double diff = std::abs(double(cuda[i]) - cpu[i]);
        const double rel = diff / std::max(1e-6, std::abs(double(cpu[i])));
        worst = std::max(worst, std::min(rel, diff));
        ASSERT_TRUE(diff <= 1e-3 * std::abs(cpu[i]) || diff <= 1e-5)
            << what << ": element " << i << " cuda " << cuda[i] << " cpu " << cpu[i];
        bitwise += cuda[i] == cpu[i];
    }
    std::printf(
        "[ compared ] %s: %zu elements, %zu bit-identical, worst difference %.3g\n",
        what.c_str(),
        cpu.size(),
        bitwise,
        worst);
}

struct config {
    mimo_shape shape;
    modulation mod;
    int passes;
    size_t batch;
};

const config configs[] = {
    { { 2, 2 }, modulation::qam16, 2, 8400 },
    { { 4, 4 }, modulation::qam16, 1, 8400 },
    { { 4, 4 }, modulation::qam16, 4, 8400 },
    { { 4, 4 }, modulation::qam64, 3, 3001 },
    { { 4, 2 }, modulation::qpsk, 2, 1000 },
    { { 8, 8 }, modulation::qam256, 2, 500 },
    { { 3, 3 }, modulation::qam1024, 1, 97 },
    { { 1, 1 }, modulation::qpsk, 1, 5 },
    // Shared memory near 48 KB a block: 64 problems of 8x4 (fused kernel), 16
    // of 6x6 with 4 passes (fused), 32 of 6x6 with 2 passes (the QR items' path).
    { { 8, 4 }, modulation::qpsk, 1, 1000 },
    { { 6, 6 }, modulation::qpsk, 4, 700 },
    { { 6, 6 }, modulation::qpsk, 2, 700 },
};

std::string name(const config& c)
{
    return std::to_string(c.shape.nr) + "x" + std::to_string(c.shape.nt) + " " +
           to_string(c.mod) + " N=" + std::to_string(c.passes);
}

} // namespace

TEST(cuda_backend, qr_items_match_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (const config& c : configs) {
        problem_batch pb(c.shape, c.mod, c.batch, 12.0, seed);
        batched_qr cpu(c.shape, c.passes, backend::cpu),
            gpu(c.shape, c.passes, backend::cuda);
        ASSERT_EQ(gpu.active_backend(), backend::cuda);
        std::vector<float> a(c.batch * cpu.layout().floats_per_item(), NAN),
            b(a.size(), NAN);
        cpu.run(pb.H.data(), pb.y.data(), c.batch, a.data());
        gpu.run(pb.H.data(), pb.y.data(), c.batch, b.data());
        expect_close(b, a, "qr " + name(c));
    }
}

TEST(cuda_backend, nway_llrs_match_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (const config& c : configs) {
        for (float clip : { 0.0f, 8.0f }) {
            problem_batch pb(c.shape, c.mod, c.batch, 15.0, seed + 1);
            nway_ssfe_detector cpu({ c.shape, c.mod, c.passes, clip }, backend::cpu),
                gpu({ c.shape, c.mod, c.passes, clip }, backend::cuda);
            std::vector<float> a(c.batch * cpu.llrs_per_problem(), NAN), b(a.size(), NAN),
                d(a.size(), NAN);
            cpu.detect(pb.H.data(), pb.y.data(), c.batch, pb.n0, a.data());
            gpu.detect(pb.H.data(), pb.y.data(), c.batch, pb.n0, b.data());
            expect_close(b, a, "nway " + name(c) + " clip " + std::to_string(clip));
            // The QR-item entry point (the GNU Radio block's path) too.
            batched_qr qr(c.shape, c.passes, backend::cpu);
            std::vector<float> items(c.batch * qr.layout().floats_per_item());
            qr.run(pb.H.data(), pb.y.data(), c.batch, items.data());
            gpu.detect_qr(items.data(), c.batch, pb.n0, d.data());
            expect_close(d, a, "nway from items " + name(c));
        }
    }
}

TEST(cuda_backend, ml_llrs_match_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    struct ml_config {
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const ml_config& c : { ml_config{ { 2, 2 }, modulation::qam16, 2000 },
                                ml_config{ { 4, 4 }, modulation::qam16, 300 },
                                ml_config{ { 4, 2 }, modulation::qam64, 500 },
                                ml_config{ { 4, 4 }, modulation::qpsk, 1001 },
                                ml_config{ { 2, 1 }, modulation::qam1024, 50 } }) {
        problem_batch pb(c.shape, c.mod, c.batch, 10.0, seed + 2);
        ml_detector cpu(c.shape, c.mod, backend::cpu), gpu(c.shape, c.mod, backend::cuda);
        std::vector<float> a(c.batch * cpu.llrs_per_problem(), NAN), b(a.size(), NAN);
        cpu.detect(pb.H.data(), pb.y.data(), c.batch, pb.n0, a.data());
        gpu.detect(pb.H.data(), pb.y.data(), c.batch, pb.n0, b.data());
        expect_close(b,
                     a,
                     "ml " + std::to_string(c.shape.nr) + "x" +
                         std::to_string(c.shape.nt) + " " + to_string(c.mod));
    }
}

TEST(cuda_backend, ml_with_priors_equals_the_cpu_to_the_bit)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (const modulation mod : { modulation::qpsk, modulation::qam16 }) {
        problem_batch pb({ 4, 3 }, mod, 777, 9.0, seed);
        ml_detector cpu(pb.shape, mod, backend::cpu), gpu(pb.shape, mod, backend::cuda);
        cpu.set_bad_problem_policy(bad_problem_policy::erase);
        gpu.set_bad_problem_policy(bad_problem_policy::erase);
        const size_t n = size_t(cpu.llrs_per_problem());
        std::mt19937_64 rng(seed + 7);
        std::normal_distribution<float> normal(0.0f, 4.0f);
        std::vector<float> priors(pb.batch * n);
        for (auto& p : priors)
            p = normal(rng);
        priors[17 * n + 1] = NAN; // erased alike
        detector_input in;
        in.H = pb.H.data();
        in.y = pb.y.data();
        in.channels = pb.batch;
        in.n0 = pb.n0;
        in.priors = priors.data();
        std::vector<float> a(pb.batch * n, NAN), b(a.size(), NAN);
        const detection_report ra = cpu.detect(in, a.data());
        const detection_report rb = gpu.detect(in, b.data());
        EXPECT_EQ(ra.erased, 1u);
        EXPECT_EQ(rb.erased, 1u);
        expect_bit_identical(b, a, "ml with priors, host path, " + to_string(mod));

#ifdef MIMO_GPU_HAVE_CUDA
        // Device memory: H, y, priors and LLRs on the GPU.
        cfloat *dH = nullptr, *dy = nullptr;
        float *dp = nullptr, *dl = nullptr;
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dH), pb.H.size() * sizeof(cfloat)),
                  cudaSuccess);
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), pb.y.size() * sizeof(cfloat)),
                  cudaSuccess);
        ASSERT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&dp), priors.size() * sizeof(float)),
            cudaSuccess);
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dl), a.size() * sizeof(float)),
                  cudaSuccess);
        cudaMemcpy(dH, pb.H.data(), pb.H.size() * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemcpy(dy, pb.y.data(), pb.y.size() * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemcpy(
            dp, priors.data(), priors.size() * sizeof(float), cudaMemcpyHostToDevice);
        detector_input din = in;
        din.H = dH;
        din.y = dy;
        din.priors = dp;
        gpu.detect_device(din, dl, nullptr);
        EXPECT_EQ(gpu.check_device_status(nullptr).erased, 1u);
        std::fill(b.begin(), b.end(), NAN);
        cudaMemcpy(b.data(), dl, b.size() * sizeof(float), cudaMemcpyDeviceToHost);
        expect_bit_identical(b, a, "ml with priors, device path, " + to_string(mod));
        cudaFree(dH);
        cudaFree(dy);
        cudaFree(dp);
        cudaFree(dl);
#endif
    }
}

TEST(cuda_backend, repeated_calls_with_changing_batch_sizes_reuse_buffers_correctly)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    nway_ssfe_detector cpu({ { 4, 4 }, modulation::qam16, 2, 0.0f }, backend::cpu),
        gpu({ { 4, 4 }, modulation::qam16, 2, 0.0f }, backend::cuda);
    for (size_t batch :
         { size_t(1), size_t(5000), size_t(33), size_t(12000), size_t(7) }) {
        problem_batch pb({ 4, 4 }, modulation::qam16, batch, 14.0, seed + batch);
        std::vector<float> a(batch * 16, NAN), b(a.size(), NAN);
        cpu.detect(pb.H.data(), pb.y.data(), batch, pb.n0, a.data());
        gpu.detect(pb.H.data(), pb.y.data(), batch, pb.n0, b.data());
        expect_close(b, a, "batch " + std::to_string(batch));
    }
}

TEST(cuda_backend, bad_problems_are_reported_like_on_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    problem_batch pb({ 4, 4 }, modulation::qam16, 500, 14.0, fresh_seed());
    nway_ssfe_detector gpu({ { 4, 4 }, modulation::qam16, 4, 0.0f }, backend::cuda);
    ml_detector ml({ 4, 4 }, modulation::qpsk, backend::cuda);
    std::vector<float> llr(500 * 16);
    auto bad = pb;
    bad.y[4 * 321 + 2] = cfloat(0, NAN);
    bad.y[4 * 400] = cfloat(INFINITY, 0);
    for (int round = 0; round < 2; ++round) { // the error must not stick to the next call
        try {
            gpu.detect(bad.H.data(), bad.y.data(), 500, pb.n0, llr.data());
            FAIL() << "NaN accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("problem 321"), std::string::npos)
                << e.what();
        }
        EXPECT_NO_THROW(gpu.detect(pb.H.data(), pb.y.data(), 500, pb.n0, llr.data()));
    }
    bad = pb;
    for (int r = 0; r < 4; ++r)
        bad.H[16 * 77 + r * 4 + 3] = bad.H[16 * 77 + r * 4 + 1] * 2.0f;
    try {
        gpu.detect(bad.H.data(), bad.y.data(), 500, pb.n0, llr.data());
        FAIL() << "singular H accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 77"), std::string::npos)
            << e.what();
    }
    // A large batch is pipelined in chunks: the index must still be the batch's.
    problem_batch big({ 4, 4 }, modulation::qam16, 9000, 14.0, 11);
    std::vector<float> big_llr(9000 * 16);
    big.H[16 * 8765 + 5] = cfloat(NAN, 0);
    try {
        gpu.detect(big.H.data(), big.y.data(), 9000, big.n0, big_llr.data());
        FAIL() << "NaN accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 8765"), std::string::npos)
            << e.what();
    }
    problem_batch q({ 4, 4 }, modulation::qpsk, 50, 14.0, 3);
    q.H[16 * 9] = cfloat(NAN, 0);
    std::vector<float> mllr(50 * 8);
    EXPECT_THROW(ml.detect(q.H.data(), q.y.data(), 50, q.n0, mllr.data()),
                 std::invalid_argument);
}
