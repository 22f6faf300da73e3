// The fixed-complexity sphere decoders ("fsd" hard, "sfsd" soft) and K-best
// ("kbest"): exact max-log ML where the list holds every hypothesis (SFSD for
// nt = 2 with every path extended, K-best with K >= M^(nt-1)), FSD's hard
// decisions against ML's, the behaviour for 4x4, bad input, and CUDA against
// the CPU on fresh random inputs.
#include "../test_support.h"

#include <tuple>
#include <utility>

#include <mimo_gpu/detector_registry.h>

#include <algorithm>
#include <cmath>

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

void expect_max_log_ml(const std::vector<float>& llr,
                       const problem_batch& pb,
                       const std::string& what)
{
    const constellation con(pb.mod);
    for (size_t p = 0; p < pb.batch; ++p) {
        const auto ref = brute_force_llr(con,
                                         pb.shape.nr,
                                         pb.shape.nt,
                                         pb.H.data() + p * pb.shape.nr * pb.shape.nt,
                                         pb.y.data() + p * pb.shape.nr,
                                         pb.n0);
        for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_NEAR(llr[p * ref.size() + i], ref[i], 1e-3 * (1 + std::abs(ref[i])))
                << what << " problem " << p << " bit " << i;
    }
}

} // namespace

TEST(sphere_detectors, full_lists_equal_exhaustive_max_log_ml)
{
    const uint64_t seed = fresh_seed();
    for (modulation mod : { modulation::qpsk, modulation::qam16, modulation::qam64 }) {
        const int M = constellation(mod).order();
        for (double snr : { 0.0, 10.0, 20.0 }) {
            // SFSD, 2x2 (and 3x2), every FE path extended: each bit's best
            // counter-hypothesis is in the list.
            for (mimo_shape shape : { mimo_shape{ 2, 2 }, mimo_shape{ 3, 2 } }) {
                problem_batch pb(shape, mod, 60, snr, seed + uint64_t(snr) + M);
                auto sfsd = make("sfsd",
                                 shape,
                                 mod,
                                 backend::cpu,
                                 { { "niter", M }, { "llr_clip", 0 } });
                expect_max_log_ml(run(*sfsd, pb),
                                  pb,
                                  "sfsd " + to_string(mod) + " SNR " +
                                      std::to_string(snr));
            }
            // K-best keeping every path (K = M^(nt-1) suffices: nothing is pruned before
            // the last level).
            const mimo_shape shape = M <= 16 ? mimo_shape{ 3, 3 } : mimo_shape{ 2, 2 };
            const int K = M <= 16 ? M * M : M;
            problem_batch pb(shape, mod, 30, snr, seed + 7 + uint64_t(snr) + M);
            auto kbest = make(
                "kbest", shape, mod, backend::cpu, { { "k", K }, { "llr_clip", 0 } });
            expect_max_log_ml(run(*kbest, pb),
                              pb,
                              "kbest " + to_string(mod) + " SNR " + std::to_string(snr));
        }
    }
}

TEST(sphere_detectors, fsd_hard_decisions_are_the_best_path_and_close_to_ml)
{
    // 4x4 16-QAM at 16 dB: FSD's hard decisions (+-clip) against ML's; the paper
    // claims ML performance. Also: every output is exactly +-clip.
    problem_batch pb({ 4, 4 }, modulation::qam16, 3000, 16.0, fresh_seed());
    auto fsd = make("fsd", pb.shape, pb.mod, backend::cpu, { { "llr_clip", 5.0 } });
    auto ml = make("ml", pb.shape, pb.mod, backend::cpu);
    const auto hard = run(*fsd, pb);
    for (float v : hard)
        ASSERT_EQ(std::abs(v), 5.0f);
    const auto ml_llr = run(*ml, pb);
    const double not_ml = fraction_farther_than_ml(pb, ml_llr, hard, "fsd");
    const double ber_fsd = bit_error_rate(pb.bits, hard),
                 ber_ml = bit_error_rate(pb.bits, ml_llr);
    std::printf("[ ber      ] 4x4 16-QAM 16 dB: FSD %.4g, ML %.4g; FSD's decision not "
                "ML's in %.4g of problems\n",
                ber_fsd,
                ber_ml,
                not_ml);
    EXPECT_LT(not_ml, 0.01); // seen: 0 to 0.001 over 20 seeds
    EXPECT_LT(ber_fsd, 2 * ber_ml + 5e-4);
}

TEST(sphere_detectors, four_streams_soft_lists_approach_ml)
{
    // Statistical: 4x4 16-QAM at 14 dB, SFSD (paper Niter) and K-best 16 between ML and
    // FSD's single list.
    problem_batch pb({ 4, 4 }, modulation::qam16, 3000, 14.0, fresh_seed());
    auto ml = make("ml", pb.shape, pb.mod, backend::cpu);
    auto sfsd = make("sfsd", pb.shape, pb.mod, backend::cpu);
    auto kbest = make("kbest", pb.shape, pb.mod, backend::cpu, { { "k", 16 } });
    const double b_ml = bit_error_rate(pb.bits, run(*ml, pb)),
                 b_sfsd = bit_error_rate(pb.bits, run(*sfsd, pb)),
                 b_kb = bit_error_rate(pb.bits, run(*kbest, pb));
    std::printf("[ ber      ] 4x4 16-QAM 14 dB: ML %.4g, SFSD %.4g, K-best 16 %.4g\n",
                b_ml,
                b_sfsd,
                b_kb);
    EXPECT_LT(b_sfsd, 2 * b_ml + 1e-3);
    EXPECT_LT(b_kb, 2 * b_ml + 1e-3);
}

TEST(sphere_detectors, pruned_paths_or_the_limit_stand_in_for_missing_counter_hypotheses)
{
    // K = 1 keeps a single path: every counter-hypothesis comes from a pruned
    // path beyond the list's distance or is +-missing_llr; either way no LLR is
    // 0, and the signs are the kept path's (the same with and without the clip).
    problem_batch pb({ 4, 4 }, modulation::qam16, 500, 12.0, fresh_seed());
    std::vector<float> unclipped;
    for (float clip : { 0.0f, 8.0f }) {
        auto k1 = make("kbest",
                       pb.shape,
                       pb.mod,
                       backend::cpu,
                       { { "k", 1 }, { "llr_clip", clip } });
        const auto llr = run(*k1, pb);
        if (unclipped.empty())
            unclipped = llr;
        size_t from_pruned = 0;
        for (size_t i = 0; i < llr.size(); ++i) {
            ASSERT_TRUE(std::isfinite(llr[i]));
            ASSERT_NE(llr[i], 0.0f) << "clip " << clip << " LLR " << i;
            ASSERT_EQ(llr[i] < 0, unclipped[i] < 0) << "clip " << clip << " LLR " << i;
            from_pruned += std::abs(llr[i]) != 3.0f; // not the default missing_llr
        }
        EXPECT_GT(from_pruned, llr.size() / 10)
            << "clip " << clip; // the pruned distances still count
    }
}

TEST(sphere_detectors, kbest_never_zeroes_a_bit_the_list_decided)
{
    // Issue 24: with K = 16 (4x4 16-QAM, 10 dB) 85 of 32,000 LLRs were exactly
    // 0 where exhaustive ML is confident: a counter-hypothesis pruned from the
    // list was "lifted" to the list's own best distance. Now no LLR is 0 where
    // the list has a decision.
    problem_batch pb({ 4, 4 }, modulation::qam16, 2000, 10.0, fresh_seed());
    auto ml = make("ml", pb.shape, pb.mod, backend::cpu);
    const auto ref = run(*ml, pb);
    for (float clip : { 0.0f, 8.0f }) {
        for (int K : { 16, 32 }) {
            auto kbest = make("kbest",
                              pb.shape,
                              pb.mod,
                              backend::cpu,
                              { { "k", K }, { "llr_clip", clip } });
            const auto llr = run(*kbest, pb);
            size_t zero = 0, zero_where_ml_is_sure = 0;
            for (size_t i = 0; i < llr.size(); ++i) {
                zero += llr[i] == 0.0f;
                zero_where_ml_is_sure += llr[i] == 0.0f && std::abs(ref[i]) > 1.0f;
            }
            std::printf("[ zeros    ] kbest:%d llr_clip %g: %zu of %zu LLRs exactly 0 "
                        "(%zu where |ML LLR| > 1)\n",
                        K,
                        double(clip),
                        zero,
                        llr.size(),
                        zero_where_ml_is_sure);
            EXPECT_EQ(zero_where_ml_is_sure, 0u) << "K " << K << " clip " << clip;
        }
    }
}

TEST(sphere_detectors, bad_parameters_and_shapes_are_clear_errors)
{
    const mimo_shape s44{ 4, 4 };
    EXPECT_THROW(make("kbest", s44, modulation::qam16, backend::cpu, { { "k", 0 } }),
                 std::invalid_argument);
    EXPECT_THROW(make("kbest", s44, modulation::qam64, backend::cpu, { { "k", 128 } }),
                 std::invalid_argument);
    EXPECT_THROW(make("sfsd", s44, modulation::qam16, backend::cpu, { { "niter", -1 } }),
                 std::invalid_argument);
    EXPECT_THROW(make("fsd", { 8, 8 }, modulation::qpsk, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(
        make("fsd", { 2, 2 }, modulation::qpsk, backend::cpu, { { "full_levels", 2 } }),
        std::invalid_argument);
    EXPECT_THROW(
        make("fsd", s44, modulation::qam256, backend::cpu, { { "full_levels", 2 } }),
        std::invalid_argument); // 65536 paths
    EXPECT_THROW(make("fsd", s44, modulation::qpsk, backend::cpu, { { "llr_clip", 0 } }),
                 std::invalid_argument);
    EXPECT_NO_THROW(make("fsd", { 1, 1 }, modulation::qam64, backend::cpu));
}

TEST(sphere_cuda, cuda_equals_the_cpu_on_fresh_inputs)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    struct cfg {
        std::string name;
        detector_parameters params;
        mimo_shape shape;
        modulation mod;
        size_t batch;
    };
    for (const cfg& c :
         { cfg{ "fsd", {}, { 4, 4 }, modulation::qpsk, 3001 },
           cfg{ "fsd", {}, { 4, 4 }, modulation::qam16, 2001 },
           cfg{ "fsd", {}, { 4, 4 }, modulation::qam64, 1001 },
           cfg{ "fsd", {}, { 6, 3 }, modulation::qam16, 501 },
           cfg{ "sfsd", {}, { 4, 4 }, modulation::qam16, 2001 },
           cfg{ "sfsd", {}, { 4, 4 }, modulation::qam64, 1001 },
           cfg{ "sfsd", { { "niter", 16 } }, { 2, 2 }, modulation::qam16, 1001 },
           cfg{ "sfsd", {}, { 4, 4 }, modulation::qam256, 101 },
           // K-best: K <= 32 and K * M <= 1024 take the selection kernel (2..32
           // children per lane), the others the threshold kernel (the children
           // under a bound sorted; all of them where a level has at most
           // max(128, 4 K) children, as with QPSK).
           cfg{ "kbest", { { "k", 8 } }, { 4, 4 }, modulation::qam16, 1001 },
           cfg{ "kbest", { { "k", 16 } }, { 4, 4 }, modulation::qam16, 1001 },
           cfg{ "kbest", { { "k", 32 } }, { 4, 4 }, modulation::qam16, 501 },
           cfg{ "kbest", { { "k", 5 } }, { 3, 3 }, modulation::qam64, 501 },
           cfg{ "kbest", { { "k", 3 } }, { 2, 2 }, modulation::qpsk, 1001 },
           cfg{ "kbest", { { "k", 1 } }, { 4, 2 }, modulation::qam16, 1001 },
           cfg{ "kbest", { { "k", 1 } }, { 4, 4 }, modulation::qam64, 501 }, // M / P = 32
           cfg{ "kbest", { { "k", 20 } }, { 4, 4 }, modulation::qpsk, 1001 }, // P = 4
           cfg{ "kbest", { { "k", 2 } }, { 1, 1 }, modulation::qam256, 501 },
           cfg{ "kbest", { { "k", 16 } }, { 4, 4 }, modulation::qam64, 301 }, // P = 32
           cfg{ "kbest", { { "k", 2 } }, { 4, 4 }, modulation::qam16, 501 },  // P = 2 < L
           cfg{ "kbest", { { "k", 1 } }, { 2, 2 }, modulation::qam256, 301 }, // P = 8 < L
           cfg{ "kbest", { { "k", 4 } }, { 2, 2 }, modulation::qam256, 301 }, // P = 32
           cfg{ "kbest", { { "k", 32 } }, { 4, 4 }, modulation::qam64, 301 },
           cfg{ "kbest", { { "k", 64 } }, { 3, 2 }, modulation::qpsk, 301 },
           cfg{ "kbest", { { "k", 16 } }, { 4, 4 }, modulation::qam256, 201 }, // 4096
           cfg{ "kbest", { { "k", 64 } }, { 4, 4 }, modulation::qam64, 201 },
           cfg{ "kbest", { { "k", 40 } }, { 4, 4 }, modulation::qam16, 301 },
           // beyond the pool's 128: the keep-th child by bisection
           cfg{ "kbest", { { "k", 256 } }, { 4, 4 }, modulation::qam16, 101 },
           cfg{ "kbest", { { "k", 130 } }, { 4, 4 }, modulation::qam16, 101 },
           cfg{ "kbest", { { "k", 64 } }, { 3, 3 }, modulation::qam64, 201 },
           cfg{ "kbest", { { "k", 16 } }, { 1, 1 }, modulation::qam256, 501 },
           cfg{ "kbest", { { "k", 64 } }, { 4, 4 }, modulation::qpsk, 501 } }) {
        for (double snr : { 4.0, 16.0 }) {
            problem_batch pb(c.shape, c.mod, c.batch, snr, seed + uint64_t(snr));
            auto cpu = make(c.name, c.shape, c.mod, backend::cpu, c.params);
            auto gpu = make(c.name, c.shape, c.mod, backend::cuda, c.params);
            expect_bit_identical(
                run(*gpu, pb), run(*cpu, pb), c.name + " " + to_string(c.mod));
        }
    }
}

TEST(sphere_cuda, kbest_full_lists_equal_exhaustive_max_log_ml)
{
    MIMO_GPU_REQUIRE_CUDA();
    // Lists that keep every path (K = M^(nt-1)) on the threshold kernel (K > 32):
    // its LLRs against exhaustive max-log ML directly, not only through the CPU.
    const uint64_t seed = fresh_seed();
    for (const auto& [mod, shape, K] :
         { std::tuple{ modulation::qam16, mimo_shape{ 3, 3 }, 256 },
           std::tuple{ modulation::qam64, mimo_shape{ 2, 2 }, 64 } })
        for (double snr : { 0.0, 10.0, 20.0 }) {
            problem_batch pb(shape, mod, 60, snr, seed + uint64_t(snr) + K);
            auto kbest = make(
                "kbest", shape, mod, backend::cuda, { { "k", K }, { "llr_clip", 0 } });
            expect_max_log_ml(run(*kbest, pb),
                              pb,
                              "cuda kbest:" + std::to_string(K) + " " + to_string(mod) +
                                  " SNR " + std::to_string(snr));
        }
}

TEST(sphere_cuda, kbest_breaks_ties_by_index_like_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    // H = I and y = 0 in most rows: every level's +-a points lie at exactly
    // equal distances (amplitudes are scale * (2l - (L - 1)), symmetric to the
    // bit), so children tie, and both engines must rank them by index. Some
    // rows hold 2a instead (near ties, whatever the rounding gives).
    for (const auto& [mod, K] :
         { std::pair{ modulation::qam16, 5 },    // P = 4
           std::pair{ modulation::qam16, 8 },    // P = 4
           std::pair{ modulation::qam16, 16 },   // P = 8
           std::pair{ modulation::qam16, 32 },   // P = 16
           std::pair{ modulation::qam16, 40 },   // the threshold kernel
           std::pair{ modulation::qam16, 256 },  // bisection
           std::pair{ modulation::qam64, 64 },   // threshold
           std::pair{ modulation::qam256, 16 },  // threshold
           std::pair{ modulation::qam64, 8 },    // P = 16
           std::pair{ modulation::qam64, 16 },   // P = 32
           std::pair{ modulation::qam256, 4 },   // P = 32
           std::pair{ modulation::qpsk, 8 } }) { // P = 2
        problem_batch pb({ 4, 4 }, mod, 257, 10.0, fresh_seed());
        const float energy = mod == modulation::qpsk    ? 2.0f
                             : mod == modulation::qam16 ? 10.0f
                             : mod == modulation::qam64 ? 42.0f
                                                        : 170.0f;
        const float a = 1.0f / std::sqrt(energy);
        for (size_t p = 0; p < pb.batch; ++p) {
            for (int r = 0; r < 4; ++r)
                for (int c = 0; c < 4; ++c)
                    pb.H[(p * 4 + r) * 4 + c] =
                        r == c ? cfloat(1.0f, 0.0f) : cfloat(0.0f);
            for (int r = 0; r < 4; ++r)
                pb.y[p * 4 + r] = cfloat((p + r) % 4 == 0 ? 2.0f * a : 0.0f,
                                         (p * r) % 5 == 1 ? 2.0f * a : 0.0f);
        }
        auto cpu = make("kbest", pb.shape, mod, backend::cpu, { { "k", K } });
        auto gpu = make("kbest", pb.shape, mod, backend::cuda, { { "k", K } });
        expect_bit_identical(
            run(*gpu, pb), run(*cpu, pb), "kbest ties K " + std::to_string(K));
    }
}

namespace {
/// K-best's LLRs with a-priori LLRs (Gaussian, sigma 3; entry `bad` made NaN
/// when given).
std::vector<float>
run_with_priors(detector& det, const problem_batch& pb, const std::vector<float>& priors)
{
    detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = pb.batch;
    in.n0 = pb.n0;
    in.priors = priors.data();
    std::vector<float> llr(pb.batch * det.llrs_per_problem(), NAN);
    det.detect(in, llr.data());
    return llr;
}

} // namespace

TEST(sphere_detectors,
     kbest_with_priors_gives_exact_extrinsic_llrs_when_nothing_is_pruned)
{
    const uint64_t seed = fresh_seed();
    // K = M^(nt-1): every path survives, so the list is the whole tree.
    for (const auto& [shape, mod, K] :
         { std::tuple{ mimo_shape{ 2, 2 }, modulation::qam16, 16 },
           std::tuple{ mimo_shape{ 3, 3 }, modulation::qpsk, 16 } }) {
        problem_batch pb(shape, mod, 150, 8.0, seed);
        // Unclipped, as the reference.
        auto kbest =
            make("kbest", shape, mod, backend::cpu, { { "k", K }, { "llr_clip", 0 } });
        const size_t n = size_t(kbest->llrs_per_problem());
        const auto priors = gaussian_priors(pb.batch * n, seed + 3);
        const auto llr = run_with_priors(*kbest, pb, priors);
        const constellation con(mod);
        for (size_t p = 0; p < pb.batch; ++p) {
            const auto ref = brute_force_llr(con,
                                             shape.nr,
                                             shape.nt,
                                             pb.H.data() + p * shape.nr * shape.nt,
                                             pb.y.data() + p * shape.nr,
                                             pb.n0,
                                             priors.data() + p * n);
            for (size_t i = 0; i < n; ++i)
                ASSERT_NEAR(llr[p * n + i],
                            ref[i],
                            1e-3 * (1 + std::abs(ref[i]) + std::abs(priors[p * n + i])))
                    << to_string(mod) << " problem " << p << " bit " << i;
        }
    }
}

TEST(sphere_detectors, kbest_zero_priors_equal_no_priors_and_bad_priors_erase)
{
    problem_batch pb({ 4, 4 }, modulation::qam16, 200, 10.0, fresh_seed());
    auto kbest = make("kbest", pb.shape, pb.mod, backend::cpu);
    kbest->set_bad_problem_policy(bad_problem_policy::erase);
    const size_t n = size_t(kbest->llrs_per_problem());
    std::vector<float> priors(pb.batch * n, 0.0f);
    expect_bit_identical(
        run_with_priors(*kbest, pb, priors), run(*kbest, pb), "zero priors");
    priors[7 * n + 3] = NAN;
    const auto llr = run_with_priors(*kbest, pb, priors);
    for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(llr[7 * n + i], 0.0f);
}

TEST(sphere_cuda, kbest_with_priors_equals_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (const auto& [mod, K] :
         { std::pair{ modulation::qam16, 8 },
           std::pair{ modulation::qam16, 16 },
           std::pair{ modulation::qam16, 1 }, // ranked at every level
           std::pair{ modulation::qam64, 16 },
           std::pair{ modulation::qam64, 32 },
           std::pair{ modulation::qam16, 64 }, // the threshold kernel
           std::pair{ modulation::qam256, 16 } }) {
        problem_batch pb(
            { 4, 4 }, mod, mod == modulation::qam256 ? 301 : 1001, 8.0, seed);
        auto cpu = make("kbest", pb.shape, mod, backend::cpu, { { "k", K } });
        auto gpu = make("kbest", pb.shape, mod, backend::cuda, { { "k", K } });
        cpu->set_bad_problem_policy(bad_problem_policy::erase);
        gpu->set_bad_problem_policy(bad_problem_policy::erase);
        auto priors =
            gaussian_priors(pb.batch * size_t(cpu->llrs_per_problem()), seed + 5);
        priors[11] = INFINITY; // problem 0 erased alike
        expect_bit_identical(run_with_priors(*gpu, pb, priors),
                             run_with_priors(*cpu, pb, priors),
                             "kbest with priors " + to_string(mod));
    }
}
