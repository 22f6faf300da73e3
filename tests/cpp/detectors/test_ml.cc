#include "../test_support.h"

#include <mimo_gpu/ml_detector.h>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

TEST(ml_detector, equals_double_precision_brute_force)
{
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const cfg& c : { cfg{ { 2, 2 }, modulation::qpsk, 200 },
                          cfg{ { 2, 2 }, modulation::qam16, 200 },
                          cfg{ { 3, 2 }, modulation::qam64, 30 },
                          cfg{ { 4, 4 }, modulation::qpsk, 100 },
                          cfg{ { 4, 3 }, modulation::qam16, 10 },
                          cfg{ { 1, 1 }, modulation::qam1024, 20 } }) {
        problem_batch pb(c.shape, c.mod, c.batch, 8.0, seed);
        ml_detector ml(c.shape, c.mod, backend::cpu);
        std::vector<float> llr(c.batch * ml.llrs_per_problem(), NAN);
        ml.detect(pb.H.data(), pb.y.data(), c.batch, pb.n0, llr.data());
        const constellation con(c.mod);
        for (size_t p = 0; p < c.batch; ++p) {
            const auto ref = brute_force_llr(con,
                                             c.shape.nr,
                                             c.shape.nt,
                                             pb.H.data() + p * c.shape.nr * c.shape.nt,
                                             pb.y.data() + p * c.shape.nr,
                                             pb.n0);
            for (size_t i = 0; i < ref.size(); ++i)
                ASSERT_NEAR(
                    llr[p * ref.size() + i], ref[i], 1e-4 * (1 + std::abs(ref[i])))
                    << to_string(c.mod) << " " << c.shape.nr << "x" << c.shape.nt
                    << " problem " << p << " bit " << i;
        }
    }
}

TEST(ml_detector, bad_input_is_rejected)
{
    EXPECT_THROW(ml_detector({ 4, 4 }, modulation::qam256, backend::cpu),
                 std::invalid_argument);
    EXPECT_NO_THROW(ml_detector({ 4, 4 }, modulation::qam64, backend::cpu));
    ml_detector ml({ 2, 2 }, modulation::qpsk, backend::cpu);
    problem_batch pb({ 2, 2 }, modulation::qpsk, 4, 10.0, 3);
    std::vector<float> llr(4 * 4);
    EXPECT_THROW(ml.detect(pb.H.data(), pb.y.data(), 4, 0.0f, llr.data()),
                 std::invalid_argument);
    EXPECT_THROW(ml.detect(pb.H.data(), pb.y.data(), 4, -1.0f, llr.data()),
                 std::invalid_argument);
    pb.H[9] = cfloat(NAN, 1);
    try {
        ml.detect(pb.H.data(), pb.y.data(), 4, pb.n0, llr.data());
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 2"), std::string::npos) << e.what();
    }
}


TEST(ml_detector, priors_give_the_exact_extrinsic_llrs)
{
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const cfg& c : { cfg{ { 2, 2 }, modulation::qpsk, 200 },
                          cfg{ { 2, 2 }, modulation::qam16, 200 },
                          cfg{ { 4, 3 }, modulation::qam16, 10 },
                          cfg{ { 4, 4 }, modulation::qpsk, 100 } }) {
        problem_batch pb(c.shape, c.mod, c.batch, 8.0, seed);
        ml_detector ml(c.shape, c.mod, backend::cpu);
        const size_t n = size_t(ml.llrs_per_problem());
        const auto priors = gaussian_priors(c.batch * n, seed + 1);
        detector_input in;
        in.H = pb.H.data();
        in.y = pb.y.data();
        in.channels = c.batch;
        in.n0 = pb.n0;
        in.priors = priors.data();
        std::vector<float> llr(c.batch * n, NAN);
        ml.detect(in, llr.data());
        const constellation con(c.mod);
        for (size_t p = 0; p < c.batch; ++p) {
            const auto ref = brute_force_llr(con,
                                             c.shape.nr,
                                             c.shape.nt,
                                             pb.H.data() + p * c.shape.nr * c.shape.nt,
                                             pb.y.data() + p * c.shape.nr,
                                             pb.n0,
                                             priors.data() + p * n);
            for (size_t i = 0; i < n; ++i)
                ASSERT_NEAR(llr[p * n + i],
                            ref[i],
                            2e-4 * (1 + std::abs(ref[i]) + std::abs(priors[p * n + i])))
                    << to_string(c.mod) << " " << c.shape.nr << "x" << c.shape.nt
                    << " problem " << p << " bit " << i;
        }
    }
}

TEST(ml_detector, zero_priors_equal_no_priors_and_bad_priors_erase)
{
    problem_batch pb({ 3, 3 }, modulation::qam16, 64, 10.0, fresh_seed());
    ml_detector ml(pb.shape, pb.mod, backend::cpu);
    ml.set_bad_problem_policy(bad_problem_policy::erase);
    const size_t n = size_t(ml.llrs_per_problem());
    detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = pb.batch;
    in.n0 = pb.n0;
    std::vector<float> plain(pb.batch * n), zero(plain.size()),
        priors(plain.size(), 0.0f);
    ml.detect(in, plain.data());
    in.priors = priors.data();
    ml.detect(in, zero.data());
    expect_bit_identical(zero, plain, "all-zero priors");

    priors[5 * n + 2] = NAN;
    priors[9 * n] = INFINITY;
    const detection_report r = ml.detect(in, zero.data());
    EXPECT_EQ(r.erased, 2u);
    for (size_t p : { 5, 9 })
        for (size_t i = 0; i < n; ++i)
            EXPECT_EQ(zero[p * n + i], 0.0f) << "problem " << p;
    EXPECT_EQ(zero[4 * n], plain[4 * n]);
}
