// MTT and OT (registry names "mtt", "ot"): exact max-log ML where the trellis
// enumerates every path through each vertex (nt <= 2), behaviour against ML
// and OT for 4x4, clipping, bad input, and CUDA against the CPU.
#include "../test_support.h"

#include <mimo_gpu/detector_registry.h>

#include <algorithm>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

std::unique_ptr<detector> make(const std::string& name,
                               mimo_shape shape,
                               modulation mod,
                               backend b,
                               detector_parameters params = {})
{
    return make_detector(name, { shape, mod, params }, b);
}

std::vector<float> run(detector& det, const problem_batch& pb)
{
    std::vector<float> llr(pb.batch * det.llrs_per_problem(), NAN);
    det.detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, llr.data());
    return llr;
}

} // namespace

TEST(mtt_detector, two_streams_equal_exhaustive_max_log_ml)
{
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const cfg& c : { cfg{ { 2, 2 }, modulation::qpsk, 300 },
                          cfg{ { 2, 2 }, modulation::qam16, 200 },
                          cfg{ { 2, 2 }, modulation::qam64, 60 },
                          cfg{ { 3, 2 }, modulation::qam16, 100 },
                          cfg{ { 1, 1 }, modulation::qam64, 50 },
                          cfg{ { 4, 1 }, modulation::qam16, 50 } }) {
        for (double snr : { 0.0, 8.0, 16.0 }) {
            problem_batch pb(c.shape, c.mod, c.batch, snr, seed + uint64_t(snr));
            auto det = make("mtt", c.shape, c.mod, backend::cpu);
            const auto llr = run(*det, pb);
            const constellation con(c.mod);
            for (size_t p = 0; p < c.batch; ++p) {
                const auto ref =
                    brute_force_llr(con,
                                    c.shape.nr,
                                    c.shape.nt,
                                    pb.H.data() + p * c.shape.nr * c.shape.nt,
                                    pb.y.data() + p * c.shape.nr,
                                    pb.n0);
                for (size_t i = 0; i < ref.size(); ++i)
                    ASSERT_NEAR(
                        llr[p * ref.size() + i], ref[i], 1e-4 * (1 + std::abs(ref[i])))
                        << to_string(c.mod) << " " << c.shape.nr << "x" << c.shape.nt
                        << " SNR " << snr << " problem " << p << " bit " << i;
            }
        }
    }
}

TEST(mtt_detector, one_pass_reaches_every_hypothesis_of_the_last_stage_only)
{
    // OT's single list holds one path per point of stream 0 (the last stage):
    // stream 0's bits always see both hypotheses, the others may not and then get +-clip.
    problem_batch pb({ 4, 4 }, modulation::qam16, 400, 10.0, fresh_seed());
    auto ot = make("ot", pb.shape, pb.mod, backend::cpu, { { "llr_clip", 6.0 } });
    const auto llr = run(*ot, pb);
    size_t at_limit = 0;
    for (size_t p = 0; p < pb.batch; ++p)
        for (int i = 0; i < 16; ++i) {
            const float v = llr[p * 16 + i];
            ASSERT_LE(std::abs(v), 6.0f);
            at_limit += std::abs(v) == 6.0f && i >= 4;
        }
    EXPECT_GT(at_limit, 0u)
        << "streams 1..3 of OT should have unreached counter-hypotheses";
    // MTT's lists cover every point of every stream: with clipping off nothing is at
    // +-1000.
    auto mtt = make("mtt", pb.shape, pb.mod, backend::cpu);
    for (float v : run(*mtt, pb))
        ASSERT_LT(std::abs(v), 1000.0f);
}

TEST(mtt_detector, four_streams_lie_between_ml_and_one_pass)
{
    // Statistical: hard-decision errors over 3000 4x4 16-QAM problems at 14 dB.
    problem_batch pb({ 4, 4 }, modulation::qam16, 3000, 14.0, fresh_seed());
    auto ml = make("ml", pb.shape, pb.mod, backend::cpu);
    auto mtt = make("mtt", pb.shape, pb.mod, backend::cpu);
    auto ot = make("ot", pb.shape, pb.mod, backend::cpu);
    const auto ml_llr = run(*ml, pb), mtt_llr = run(*mtt, pb);
    const double not_ml = fraction_farther_than_ml(pb, ml_llr, mtt_llr, "mtt");
    const double not_ml_ot = fraction_farther_than_ml(pb, ml_llr, run(*ot, pb), "ot");
    std::printf("[ measured ] decisions not ML's: MTT %.4g, OT %.4g of problems\n",
                not_ml,
                not_ml_ot);
    EXPECT_LT(not_ml, 0.02); // seen: MTT 0.0027-0.0067, OT 0.053-0.068 over 20 seeds
    EXPECT_LT(not_ml, 0.5 * not_ml_ot);
    const double ber_ml = bit_error_rate(pb.bits, ml_llr);
    const double ber_mtt = bit_error_rate(pb.bits, mtt_llr);
    const double ber_ot = bit_error_rate(pb.bits, run(*ot, pb));
    std::printf("[ ber      ] 4x4 16-QAM 14 dB: ML %.4g, MTT %.4g, OT %.4g\n",
                ber_ml,
                ber_mtt,
                ber_ot);
    EXPECT_LE(ber_mtt, ber_ot);
    EXPECT_LT(ber_mtt, 3 * ber_ml + 1e-3);
}

TEST(mtt_detector, bad_input_is_rejected)
{
    EXPECT_THROW(make("mtt", { 4, 4 }, modulation::qam256, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(make("mtt", { 9, 2 }, modulation::qpsk, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(make("mtt", { 8, 5 }, modulation::qpsk, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(
        make("mtt", { 2, 2 }, modulation::qpsk, backend::cpu, { { "passes", 2 } }),
        std::invalid_argument);
    EXPECT_THROW(
        make("ot", { 2, 2 }, modulation::qpsk, backend::cpu, { { "llr_clip", -1 } }),
        std::invalid_argument);
    auto det = make("mtt", { 2, 2 }, modulation::qpsk, backend::cpu);
    problem_batch pb({ 2, 2 }, modulation::qpsk, 6, 10.0, 5);
    std::vector<float> llr(6 * 4), priors(6 * 4, 0.0f);
    detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = 6;
    in.n0 = pb.n0;
    in.priors = priors.data();
    EXPECT_THROW(det->detect(in, llr.data()), std::invalid_argument);
    // A singular channel is named by its problem index.
    pb.H[4 * 3] = pb.H[4 * 3 + 1] = { 0, 0 };
    pb.H[4 * 3 + 2] = pb.H[4 * 3 + 3] = { 0, 0 };
    try {
        det->detect(pb.H.data(), pb.y.data(), 6, pb.n0, llr.data());
        FAIL() << "a zero channel matrix was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 3"), std::string::npos) << e.what();
    }
}

TEST(mtt_cuda, llrs_equal_the_cpu_bit_for_bit)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const std::string name : { "mtt", "ot" })
        for (const cfg& c : { cfg{ { 2, 2 }, modulation::qpsk, 16385 },
                              cfg{ { 2, 2 }, modulation::qam16, 4099 },
                              cfg{ { 2, 2 }, modulation::qam64, 1001 },
                              cfg{ { 4, 4 }, modulation::qpsk, 8191 },
                              cfg{ { 4, 4 }, modulation::qam16, 3001 },
                              cfg{ { 4, 4 }, modulation::qam64, 777 },
                              cfg{ { 3, 2 }, modulation::qam16, 501 },
                              cfg{ { 8, 4 }, modulation::qpsk, 300 },
                              cfg{ { 1, 1 }, modulation::qam64, 7 } }) {
            problem_batch pb(c.shape, c.mod, c.batch, 12.0, seed + c.batch);
            auto cpu = make(name, c.shape, c.mod, backend::cpu, { { "llr_clip", 0.0 } });
            auto gpu = make(name, c.shape, c.mod, backend::cuda, { { "llr_clip", 0.0 } });
            expect_bit_identical(run(*gpu, pb),
                                 run(*cpu, pb),
                                 name + " " + std::to_string(c.shape.nr) + "x" +
                                     std::to_string(c.shape.nt) + " " + to_string(c.mod));
        }
}

TEST(mtt_detector, both_variants_are_registered)
{
    const auto names = detector_names();
    for (const char* expected : { "mtt", "ot" })
        EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
            << expected;
}
