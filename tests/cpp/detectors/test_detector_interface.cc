// The detector interface and registry: creation by name, parameters, channel
// reuse (S symbols per H), int8 output and the errors every family shares.
#include "../test_support.h"

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/ml_detector.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#include <algorithm>
#include <functional>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {
std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}
} // namespace

TEST(detector_registry, every_family_is_made_by_name_and_states_its_capabilities)
{
    const auto names = detector_names();
    for (const char* expected : { "nway", "ml" })
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
            << expected;
    for (const auto& family : detector_families()) {
        EXPECT_FALSE(family.capabilities.modulations.empty()) << family.name;
        auto det =
            make_detector(family.name, { { 2, 2 }, modulation::qpsk, {} }, backend::cpu);
        EXPECT_EQ(det->name(), family.name);
        EXPECT_EQ(det->llrs_per_problem(), 4);
        for (const auto& p : family.parameters)
            EXPECT_EQ(det->parameter(p.name), p.default_value)
                << family.name << " " << p.name;
    }
}

TEST(detector_registry, bad_names_parameters_and_shapes_are_clear_errors)
{
    const std::string unknown = error_of([] {
        make_detector("sphere", { { 2, 2 }, modulation::qpsk, {} });
    });
    EXPECT_NE(unknown.find("unknown detector 'sphere'"), std::string::npos) << unknown;
    for (const auto& n : detector_names())
        EXPECT_NE(unknown.find(n), std::string::npos) << unknown;
    const std::string param = error_of([] {
        make_detector(
            "ml", { { 2, 2 }, modulation::qpsk, { { "passes", 2 } } }, backend::cpu);
    });
    EXPECT_NE(param.find("no parameter 'passes'"), std::string::npos) << param;
    const std::string range = error_of([] {
        make_detector(
            "nway", { { 2, 2 }, modulation::qpsk, { { "passes", 1.5 } } }, backend::cpu);
    });
    EXPECT_NE(range.find("integer"), std::string::npos) << range;
    EXPECT_NE(error_of([] {
                  make_detector("nway",
                                { { 2, 2 }, modulation::qpsk, { { "passes", 3 } } },
                                backend::cpu);
              }),
              "");
    const std::string shape = error_of([] {
        make_detector("mtt", { { 16, 16 }, modulation::qpsk, {} }, backend::cpu);
    });
    EXPECT_NE(shape.find("nr <= 8"), std::string::npos) << shape;
    const std::string mod = error_of([] {
        make_detector("mtt", { { 2, 2 }, modulation::qam256, {} }, backend::cpu);
    });
    EXPECT_NE(mod.find("does not take 256qam"), std::string::npos) << mod;
    EXPECT_NE(error_of([] {
                  make_detector("nway", { { 2, 3 }, modulation::qpsk, {} }, backend::cpu);
              }),
              "");
}

TEST(detector_registry, specs_parse_primary_and_named_parameters)
{
    const auto specs = parse_detector_list("nway:1,nway:passes=2:llr_clip=4,mtt,ml");
    ASSERT_EQ(specs.size(), 4u);
    EXPECT_EQ(specs[0].parameters.at("passes"), 1);
    EXPECT_EQ(specs[0].label(), "nway:1");
    EXPECT_EQ(specs[1].parameters.at("llr_clip"), 4);
    EXPECT_EQ(specs[1].label(), "nway:2:llr_clip=4");
    EXPECT_EQ(specs[2].label(), "mtt");
    EXPECT_EQ(parse_detector_spec("ot:llr_clip=4").label(),
              "ot:llr_clip=4"); // not "ot:4"
    EXPECT_EQ(parse_detector_spec("kbest:32").label(), "kbest:32");
    EXPECT_THROW(parse_detector_spec("ml:3"), std::invalid_argument);
    EXPECT_THROW(parse_detector_spec("nway:x"), std::invalid_argument);
    EXPECT_THROW(parse_detector_spec("nway:depth=3"), std::invalid_argument);
    EXPECT_THROW(parse_detector_spec("nosuch:4"), std::invalid_argument);
    EXPECT_THROW(parse_detector_list(""), std::invalid_argument);
    EXPECT_EQ(parse_parameter_list("passes=2, llr_clip=8").size(), 2u);
    EXPECT_THROW(parse_parameter_list("passes"), std::invalid_argument);
    // A parameter given twice is an error, not the last one silently (issue 23).
    for (const char* twice : { "nway:2:passes=3",
                               "nway:passes=2:passes=3",
                               "nway:passes=2,passes=2",
                               "nway:2:2" }) {
        try {
            parse_detector_spec(twice);
            ADD_FAILURE() << twice << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("'passes' is given twice"),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(detector_interface, registry_detectors_equal_the_family_classes)
{
    problem_batch pb({ 4, 4 }, modulation::qam16, 300, 12.0, fresh_seed());
    std::vector<float> a(300 * 16, NAN), b(a.size(), NAN);
    nway_ssfe_detector direct({ pb.shape, pb.mod, 3, 5.0f }, backend::cpu);
    direct.detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, a.data());
    auto by_name =
        make_detector("nway",
                      { pb.shape, pb.mod, { { "passes", 3 }, { "llr_clip", 5 } } },
                      backend::cpu);
    by_name->detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, b.data());
    expect_bit_identical(b, a, "nway by name");
    ml_detector ml(pb.shape, pb.mod, backend::cpu);
    ml.detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, a.data());
    make_detector("ml", { pb.shape, pb.mod, {} }, backend::cpu)
        ->detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, b.data());
    expect_bit_identical(b, a, "ml by name");
}

TEST(detector_interface, symbols_sharing_a_channel_equal_a_repeated_channel)
{
    const int S = 5;
    const size_t C = 40;
    problem_batch pb({ 2, 2 }, modulation::qam16, C * S, 10.0, fresh_seed());
    std::vector<cfloat> H_per_channel(C * 4), H_repeated(C * S * 4);
    for (size_t c = 0; c < C; ++c)
        for (int i = 0; i < 4; ++i) {
            H_per_channel[c * 4 + i] = pb.H[c * S * 4 + i];
            for (int s = 0; s < S; ++s)
                H_repeated[(c * S + s) * 4 + i] = pb.H[c * S * 4 + i];
        }
    for (const auto& name : detector_names()) {
        auto det = make_detector(name, { pb.shape, pb.mod, {} }, backend::cpu);
        std::vector<float> want(C * S * 8, NAN), got(want.size(), NAN);
        det->detect(H_repeated.data(), pb.y.data(), C * S, pb.n0, want.data());
        detector_input in;
        in.H = H_per_channel.data();
        in.y = pb.y.data();
        in.channels = C;
        in.symbols_per_channel = S;
        in.n0 = pb.n0;
        det->detect(in, got.data());
        expect_bit_identical(got, want, name + " with S = 5");
        // int8 output: the stated scale, saturating at +-127.
        std::vector<int8_t> q(want.size());
        det->detect(in, q.data(), 4.0f);
        for (size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(q[i],
                      int8_t(std::max(-127.0f,
                                      std::min(127.0f, std::nearbyint(want[i] * 4.0f)))))
                << i;
    }
}

TEST(detector_interface, bad_calls_are_clear_errors)
{
    auto det = make_detector("nway", { { 2, 2 }, modulation::qpsk, {} }, backend::cpu);
    problem_batch pb({ 2, 2 }, modulation::qpsk, 4, 10.0, 3);
    std::vector<float> llr(16), priors(16, 0.0f);
    detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = 4;
    in.n0 = pb.n0;
    in.priors = priors.data();
    EXPECT_NE(
        error_of([&] { det->detect(in, llr.data()); }).find("takes no a-priori LLRs"),
        std::string::npos);
    in.priors = nullptr;
    in.symbols_per_channel = 0;
    EXPECT_NE(error_of([&] { det->detect(in, llr.data()); }).find("symbols per channel"),
              std::string::npos);
    in.symbols_per_channel = 1;
    for (double n0 : { 0.0, -1.0, 1e-50, 1e300, double(NAN) }) {
        in.n0 = float(n0);
        EXPECT_THROW(check_noise_variance(n0), std::invalid_argument) << n0;
        if (n0 != 1e300 && n0 != 1e-50) { // those two are no float at all
            EXPECT_THROW(det->detect(in, llr.data()), std::invalid_argument) << n0;
        }
    }
    in.n0 = pb.n0;
    EXPECT_THROW(det->detect(in, static_cast<float*>(nullptr)), std::invalid_argument);
    EXPECT_THROW(det->detect(in, reinterpret_cast<int8_t*>(llr.data()), 0.0f),
                 std::invalid_argument);
    EXPECT_THROW(det->set_parameter("passes", 2),
                 std::invalid_argument); // fixed at construction
    EXPECT_THROW(det->set_parameter("llr_clip", -1), std::invalid_argument);
    det->set_parameter("llr_clip", 2);
    det->detect(in, llr.data());
    for (float v : llr)
        EXPECT_LE(std::abs(v), 2.0f);
    if (!cuda_available()) {
        EXPECT_THROW(det->detect_device(in, llr.data(), nullptr), std::logic_error);
    }
}

namespace {

/// Shared channels with bad ones among them, for `backend`: channel 1 singular
/// (a zero column), channel 2 with a NaN, one symbol of channel 3 with an
/// infinite y. The report and the LLRs equal those of the channels repeated
/// per symbol (families that reuse channels make each channel's QR once).
void expect_bad_shared_channels_like_repeated(backend b)
{
    const int S = 4;
    const size_t C = 12;
    problem_batch pb({ 4, 4 }, modulation::qam16, C * S, 12.0, fresh_seed());
    std::vector<cfloat> H(C * 16), H_repeated(C * S * 16);
    for (size_t c = 0; c < C; ++c)
        std::copy_n(pb.H.data() + c * S * 16, 16, H.data() + c * 16);
    for (int r = 0; r < 4; ++r)
        H[1 * 16 + r * 4 + 2] = cfloat(0, 0); // channel 1: stream 2 unseen
    H[2 * 16 + 5] = cfloat(NAN, 0);
    std::vector<cfloat> y = pb.y;
    y[(3 * S + 2) * 4 + 1] = cfloat(0, INFINITY);
    for (size_t c = 0; c < C; ++c)
        for (int s = 0; s < S; ++s)
            std::copy_n(H.data() + c * 16, 16, H_repeated.data() + (c * S + s) * 16);
    for (const auto& name : detector_names()) {
        auto det = make_detector(name, { pb.shape, pb.mod, {} }, b);
        det->set_bad_problem_policy(bad_problem_policy::erase);
        std::vector<float> want(C * S * 16, NAN), got(want.size(), NAN);
        const detection_report expected =
            det->detect(H_repeated.data(), y.data(), C * S, pb.n0, want.data());
        detector_input in;
        in.H = H.data();
        in.y = y.data();
        in.channels = C;
        in.symbols_per_channel = S;
        in.n0 = pb.n0;
        const detection_report report = det->detect(in, got.data());
        EXPECT_EQ(report.erased, expected.erased) << name;
        EXPECT_TRUE(report.first_erased == expected.first_erased) << name;
        EXPECT_GE(report.erased, size_t(S + 1))
            << name; // channel 2 and the bad y at least
        expect_bit_identical(got, want, name + " bad shared channels");
    }
}

} // namespace

TEST(detector_interface, bad_shared_channels_erase_as_repeated_ones)
{
    expect_bad_shared_channels_like_repeated(backend::cpu);
}

TEST(detector_cuda, bad_shared_channels_erase_as_repeated_ones)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_bad_shared_channels_like_repeated(backend::cuda);
}

TEST(detector_cuda, device_path_with_shared_channels_and_int8_equals_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const int S = 3;
    const size_t C = 1001;
    problem_batch pb({ 4, 4 }, modulation::qam16, C * S, 12.0, fresh_seed());
    for (const auto& name : detector_names()) {
        auto cpu = make_detector(name, { pb.shape, pb.mod, {} }, backend::cpu);
        auto gpu = make_detector(name, { pb.shape, pb.mod, {} }, backend::cuda);
        detector_input in;
        in.H = pb.H.data(); // channel c is problem c*S's matrix: any C matrices will do
        in.y = pb.y.data();
        in.channels = C;
        in.symbols_per_channel = S;
        in.n0 = pb.n0;
        std::vector<float> want(C * S * 16, NAN), got(want.size(), NAN);
        cpu->detect(in, want.data());
        gpu->detect(in, got.data());
        const bool exact = cpu->capabilities().bit_identical_backends;
        expect_backends_agree(got, want, exact, name + " host path, S = 3");
        std::vector<int8_t> q_cpu(want.size()), q_gpu(want.size());
        cpu->detect(in, q_cpu.data(), 8.0f);
        gpu->detect(in, q_gpu.data(), 8.0f);
        expect_int8_agree(q_gpu, q_cpu, exact, name + " int8");
#ifdef MIMO_GPU_HAVE_CUDA
        // Device memory, asynchronous on a stream (families with a device path).
        cfloat *dH = nullptr, *dy = nullptr;
        float* dllr = nullptr;
        int8_t* dq = nullptr;
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dH), C * 16 * sizeof(cfloat)),
                  cudaSuccess);
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), C * S * 4 * sizeof(cfloat)),
                  cudaSuccess);
        ASSERT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&dllr), want.size() * sizeof(float)),
            cudaSuccess);
        ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dq), want.size()), cudaSuccess);
        cudaMemcpy(dH, pb.H.data(), C * 16 * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemcpy(dy, pb.y.data(), C * S * 4 * sizeof(cfloat), cudaMemcpyHostToDevice);
        cudaMemset(dllr, 0xff, want.size() * sizeof(float)); // NaN
        detector_input din = in;
        din.H = dH;
        din.y = dy;
        bool has_device_path = true;
        try {
            gpu->detect_device(din, dllr, nullptr);
            gpu->detect_device(din, dq, 8.0f, nullptr);
            gpu->check_device_status(nullptr);
        } catch (const std::logic_error& e) {
            has_device_path = false;
            std::printf("[ device   ] %s: %s\n", name.c_str(), e.what());
        }
        if (has_device_path) {
            std::fill(got.begin(), got.end(), NAN);
            cudaMemcpy(
                got.data(), dllr, want.size() * sizeof(float), cudaMemcpyDeviceToHost);
            expect_backends_agree(got, want, exact, name + " device path, S = 3");
            cudaMemcpy(q_gpu.data(), dq, want.size(), cudaMemcpyDeviceToHost);
            expect_int8_agree(q_gpu, q_cpu, exact, name + " device int8");
        }
        cudaFree(dH);
        cudaFree(dy);
        cudaFree(dllr);
        cudaFree(dq);
#endif
    }
}

namespace {
/// Every family that takes a-priori LLRs, with a shape and modulation it takes.
std::vector<std::string> families_with_priors()
{
    std::vector<std::string> names;
    for (const auto& f : detector_families())
        if (f.capabilities.accepts_priors && f.takes({ 3, 3 }, modulation::qam16))
            names.push_back(f.name);
    return names;
}

} // namespace

TEST(detector_interface, every_family_with_priors_keeps_the_prior_rules)
{
    // DESIGN.md, priors: all-zero priors give the no-prior LLRs exactly; a
    // non-finite prior erases its problem and no other; priors that agree with
    // the sent bits move the extrinsic LLRs no further from them than a
    // detector without priors (the prior is not counted twice).
    const auto names = families_with_priors();
    ASSERT_FALSE(names.empty());
    const int S = 2;
    const size_t C = 60;
    problem_batch pb({ 3, 3 }, modulation::qam16, C * S, 10.0, fresh_seed());
    for (const auto& name : names) {
        auto det = make_detector(name, { pb.shape, pb.mod, {} }, backend::cpu);
        det->set_bad_problem_policy(bad_problem_policy::erase);
        const size_t n = size_t(det->llrs_per_problem());
        std::vector<float> priors(C * S * n, 0.0f);
        const auto plain = detect_batch(*det, pb, C, S, nullptr);
        expect_bit_identical(
            detect_batch(*det, pb, C, S, priors.data()), plain, name + " zero priors");

        priors[4 * n + 1] = NAN;
        priors[9 * n] = -INFINITY;
        const auto erased = detect_batch(*det, pb, C, S, priors.data());
        for (size_t p = 0; p < C * S; ++p)
            for (size_t i = 0; i < n; ++i) {
                if (p == 4 || p == 9)
                    ASSERT_EQ(erased[p * n + i], 0.0f) << name << " problem " << p;
                else
                    ASSERT_EQ(erased[p * n + i], plain[p * n + i])
                        << name << " problem " << p;
            }

        // Moderate priors toward the sent bits: the a-posteriori LLRs (extrinsic
        // plus prior) agree with the bits at least as often as without priors.
        for (size_t i = 0; i < priors.size(); ++i)
            priors[i] = pb.bits[i] ? -2.0f : 2.0f;
        const auto ext = detect_batch(*det, pb, C, S, priors.data());
        std::vector<float> app(ext.size());
        for (size_t i = 0; i < ext.size(); ++i)
            app[i] = ext[i] + priors[i];
        EXPECT_LE(bit_error_rate(pb.bits, app), bit_error_rate(pb.bits, plain)) << name;
    }
}

TEST(detector_cuda, every_family_with_priors_equals_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const int S = 2;
    const size_t C = 300;
    const uint64_t seed = fresh_seed();
    problem_batch pb({ 3, 3 }, modulation::qam16, C * S, 10.0, seed);
    std::mt19937_64 rng(seed + 1);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    for (const auto& name : families_with_priors()) {
        auto cpu = make_detector(name, { pb.shape, pb.mod, {} }, backend::cpu);
        auto gpu = make_detector(name, { pb.shape, pb.mod, {} }, backend::cuda);
        std::vector<float> priors(C * S * size_t(cpu->llrs_per_problem()));
        for (auto& p : priors)
            p = normal(rng);
        expect_backends_agree(detect_batch(*gpu, pb, C, S, priors.data()),
                              detect_batch(*cpu, pb, C, S, priors.data()),
                              cpu->capabilities().bit_identical_backends,
                              name + " with priors");
    }
}
